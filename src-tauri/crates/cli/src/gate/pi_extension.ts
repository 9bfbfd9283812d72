// Crosscheck cold review gate for pi (installed by `crosscheck gate install pi`).
//
// When the agent calls exit_plan_mode, this runs `crosscheck gate plan` on the plan (the
// pi-modes draft file when the runtime bridge publishes one, else the tool's `plan`
// parameter). Exit code 2 blocks the call with the review as the reason; an unchanged plan
// proceeds on the next call. Plain JavaScript syntax, so it also loads as an ES module.
import { spawn } from "node:child_process";

const CROSSCHECK = __CROSSCHECK_COMMAND__;

function runGate(args, cwd, author) {
  return new Promise((resolve) => {
    const env = { ...process.env };
    if (author) env.CROSSCHECK_AUTHOR_MODEL = author;
    let stderr = "";
    let child;
    try {
      child = spawn(CROSSCHECK, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      resolve({ code: null, stderr: String(error) });
      return;
    }
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
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
    const args = ["gate", "plan", "--cwd", cwd];
    const bridge = globalThis[Symbol.for("gadhs:pi-modes-runtime")];
    const draft = typeof bridge?.planDraftPath === "function" ? bridge.planDraftPath(cwd) : undefined;
    if (typeof draft === "string" && draft !== "") args.push("--file", draft);
    const plan = event?.input?.plan;
    args.push("--text", typeof plan === "string" ? plan : "");
    const author = ctx?.model?.id;
    const { code, stderr } = await runGate(args, cwd, typeof author === "string" ? author : undefined);
    if (code === 2) return { block: true, reason: reasonFrom(stderr) };
    if (code !== 0) {
      ctx?.ui?.notify?.(`Crosscheck gate could not run: ${reasonFrom(stderr) || `exit ${code}`}`, "warning");
    }
    return undefined;
  });
}
