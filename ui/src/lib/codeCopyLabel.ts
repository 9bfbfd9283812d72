// The localized label of code blocks' copy buttons, apart from the markdown renderer so the
// app can set it without loading the renderer (which comes with the chat's script).

/** The label and the accessible name the renderer writes into each code block's button. */
export const codeCopyLabel = { label: 'Copy', aria: 'Copy code' };

/** Sets the localized label of code blocks' copy buttons. */
export function setCodeCopyLabel(label: string, aria: string): void {
  codeCopyLabel.label = label;
  codeCopyLabel.aria = aria;
}
