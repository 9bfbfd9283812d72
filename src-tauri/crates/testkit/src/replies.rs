//! Canned reviewer replies in the checklists' shape (`P1`-`P8` for plans, `J1`-`J8` for
//! commits, then the verdict line), for scripting a [`ModelServer`](crate::ModelServer).

/// A well-formed clean plan review: every check passes.
pub fn plan_clean() -> String {
    (1..=8)
        .map(|n| format!("P{n} PASS — looked for it; present."))
        .chain(["VERDICT: CLEAN".to_owned()])
        .collect::<Vec<_>>()
        .join("\n")
}

/// A well-formed plan review with exactly one failing check (P1).
pub fn plan_one_flag() -> String {
    [
        "P1 FAIL — \"Increments\": no file or function is named; name them.",
        "P2 PASS — one Status line per increment.",
        "P3 PASS — closes #44.",
        "P4 PASS — tests by category are listed.",
        "P5 PASS — looked for aliases, shims and migrations: none.",
        "P6 PASS — each risk names its direction.",
        "P7 PASS — claims point at tests.",
        "P8 PASS — delivery steps are listed.",
        "VERDICT: FLAGS (1)",
    ]
    .join("\n")
}

/// A well-formed plan review with two failing checks (P1 and P4).
pub fn plan_two_flags() -> String {
    [
        "P1 FAIL — \"Increments\": no files named; name them.",
        "P2 PASS — one Status line per increment.",
        "P3 PASS — closes #44.",
        "P4 FAIL — \"Tests\": no concurrency test for the race; add one.",
        "P5 PASS — looked for aliases, shims, migrations: none.",
        "P6 PASS — each risk names a direction.",
        "P7 PASS — claims point at tests.",
        "P8 PASS — delivery steps listed.",
        "VERDICT: FLAGS (2)",
    ]
    .join("\n")
}

/// A well-formed commit review with one failing check (J2).
pub fn commit_one_flag() -> String {
    [
        "J1 PASS — the diff adds the greeting it says.",
        "J2 FAIL — hello.txt:1: no test covers the new greeting; add one.",
        "J3 PASS — one concern.",
        "J4 PASS — looked for debug prints and secrets: none.",
        "J5 PASS — no error paths.",
        "J6 PASS — no always/never claims.",
        "J7 PASS — not user-visible.",
        "J8 PASS — no shims.",
        "VERDICT: FLAGS (1)",
    ]
    .join("\n")
}

/// A well-formed clean commit review.
pub fn commit_clean() -> String {
    (1..=8)
        .map(|n| format!("J{n} PASS — looked for it; fine."))
        .chain(["VERDICT: CLEAN".to_owned()])
        .collect::<Vec<_>>()
        .join("\n")
}
