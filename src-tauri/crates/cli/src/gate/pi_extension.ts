// Crosscheck cold review gate for pi (installed by `crosscheck gate install pi`).
//
// When the agent calls exit_plan_mode, this runs `crosscheck gate plan` on the plan (the
// pi-modes draft file when the runtime bridge publishes one, else the tool's `plan`
// parameter, sent on stdin). Exit code 10 (`--format pi`) blocks the call with the review as
// the reason; an unchanged plan proceeds on the next call. Plain JavaScript syntax, so it also loads as an ES module.
import { spawn } from "node:child_process";

const CROSSCHECK = __CROSSCHECK_COMMAND__;

// The plan goes to the gate on stdin: a plan may start with "-" and be larger than one
// command-line argument may be.
function runGate(args, cwd, author, plan) {
  return new Promise((resolve) => {
    const env = { ...process.env };
    if (author) env.CROSSCHECK_AUTHOR_MODEL = author;
    let stderr = "";
    let child;
    try {
      child = spawn(CROSSCHECK, args, { cwd, env, stdio: ["pipe", "ignore", "pipe"] });
    } catch (error) {
      resolve({ code: null, stderr: String(error) });
      return;
    }
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdin.on("error", () => {});
    child.stdin.end(plan);
    child.on("error", (error) => resolve({ code: null, stderr: String(error) }));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

// Log lines are JSON objects with an "event" key; the rest of stderr is the reason.
function reasonFrom(stderr) {
  return stderr
    .split("\n")
    .filter((line) => {
      try {
        const value = JSON.parse(line);
        return !(value && typeof value === "object" && "event" in value);
      } catch {
        return true;
      }
    })
    .join("\n")
    .trim();
}

export default function crosscheckGate(pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event?.toolName !== "exit_plan_mode") return undefined;
    const cwd = ctx?.cwd ?? process.cwd();
    const args = ["gate", "plan", "--format", "pi", `--cwd=${cwd}`];
    const bridge = globalThis[Symbol.for("gadhs:pi-modes-runtime")];
    const draft = typeof bridge?.planDraftPath === "function" ? bridge.planDraftPath(cwd) : undefined;
    if (typeof draft === "string" && draft !== "") args.push(`--file=${draft}`);
    args.push("--text-stdin");
    const plan = event?.input?.plan;
    const author = ctx?.model?.id;
    const { code, stderr } = await runGate(
      args,
      cwd,
      typeof author === "string" ? author : undefined,
      typeof plan === "string" ? plan : "",
    );
    // Exit 10 is the gate's pause and nothing else: an argument error cannot produce it.
    if (code === 10) return { block: true, reason: reasonFrom(stderr) };
    const note = reasonFrom(stderr);
    if (code === 0) {
      // Proceeding with a note: unreviewed, or a project file the gate ignored.
      if (note) ctx?.ui?.notify?.(note, "warning");
    } else {
      ctx?.ui?.notify?.(`Crosscheck gate could not run: ${note || `exit ${code}`}`, "warning");
    }
    return undefined;
  });
}
