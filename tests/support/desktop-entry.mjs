// The desktop entry's id: the file name under share/applications that `make install` and the
// .deb install, and the one the desktop app names in its launcher badge signal (they must agree,
// or a dock shows no count).

/** The desktop entry's file name. */
export const DESKTOP_ENTRY = 'crosscheck-desktop.desktop';
