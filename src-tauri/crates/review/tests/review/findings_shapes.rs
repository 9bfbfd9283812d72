//! The findings block's reply shapes (`fixtures/findings_shapes.md`): each names what the
//! parser must read from it, and nothing that fails to parse is ever clean.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crosscheck_review::findings::{FindingsReply, parse_findings};
use crosscheck_review::verdict::Verdict;
use serde_json::Value;

struct Shape {
    name: String,
    expect: Value,
    text: String,
}

fn shapes() -> Vec<Shape> {
    include_str!("../fixtures/findings_shapes.md")
        .split("\n### ")
        .map(|s| s.trim_start_matches("### "))
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let (name, rest) = s.split_once('\n').unwrap();
            let (expect, text) = rest.split_once('\n').unwrap();
            let expect = expect.strip_prefix("expect: ").unwrap();
            Shape {
                name: name.trim().to_owned(),
                expect: serde_json::from_str(expect).unwrap(),
                text: text.to_owned(),
            }
        })
        .collect()
}

fn check(shape: &Shape) -> Result<(), String> {
    let parsed = parse_findings(&shape.text);
    let want = shape.expect["verdict"].as_str().unwrap();
    let (verdict, findings, statuses, reviewed, warnings) = match (&parsed, want) {
        (FindingsReply::Unparsed { .. }, "unparsed") => return Ok(()),
        (FindingsReply::Unparsed { reason }, _) => return Err(format!("unparsed: {reason}")),
        (
            FindingsReply::Parsed {
                verdict,
                findings,
                statuses,
                reviewed,
                warnings,
            },
            _,
        ) => (verdict, findings, statuses, reviewed, warnings),
    };
    let kind = match verdict {
        Verdict::Clean => "clean",
        Verdict::Flags(_) => "flags",
    };
    if kind != want {
        return Err(format!("verdict {kind}, wanted {want}: {parsed:?}"));
    }
    let empty = Vec::new();
    let new = shape.expect["new"].as_array().unwrap_or(&empty);
    let got: Vec<Value> = findings
        .iter()
        .map(|f| serde_json::json!([f.id, f.severity.as_str(), f.location, f.title]))
        .collect();
    if &got != new {
        return Err(format!("findings {got:?}, wanted {new:?}"));
    }
    let status = shape.expect["status"].as_array().unwrap_or(&empty);
    let got: Vec<Value> = statuses
        .iter()
        .map(|s| serde_json::json!([s.id, s.status.as_str()]))
        .collect();
    if &got != status {
        return Err(format!("statuses {got:?}, wanted {status:?}"));
    }
    if let Some(detail) = shape.expect.get("detail") {
        let got = findings.first().and_then(|f| f.detail.clone());
        if got.as_deref() != detail.as_str() {
            return Err(format!("detail {got:?}, wanted {detail}"));
        }
    }
    let want_reviewed = shape.expect["reviewed"].as_array().unwrap_or(&empty);
    let got: Vec<Value> = reviewed.iter().map(|r| Value::from(r.label())).collect();
    if &got != want_reviewed {
        return Err(format!("reviewed {got:?}, wanted {want_reviewed:?}"));
    }
    let want_warnings = shape.expect["warnings"].as_u64().unwrap_or(0) as usize;
    if warnings.len() != want_warnings {
        return Err(format!("warnings {warnings:?}, wanted {want_warnings}"));
    }
    Ok(())
}

#[test]
fn every_findings_shape_reads_as_its_fixture_says() {
    let shapes = shapes();
    assert!(shapes.len() >= 25, "only {} shapes", shapes.len());
    let failures: Vec<String> = shapes
        .iter()
        .filter_map(|s| check(s).err().map(|e| format!("{}: {e}", s.name)))
        .collect();
    println!("{} shapes, {} failed", shapes.len(), failures.len());
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn nothing_unparsed_or_open_is_clean() {
    for shape in shapes() {
        let parsed = parse_findings(&shape.text);
        if parsed.is_clean() {
            assert_eq!(shape.expect["verdict"], "clean", "{}", shape.name);
        }
    }
}

#[test]
fn a_100_kb_reply_parses_quickly_and_keeps_every_finding() {
    let mut text = String::from("Review notes.\n\n");
    let filler =
        "The function reads the whole file into memory, which is fine for the sizes here. ";
    while text.len() < 100_000 {
        text.push_str(filler);
        text.push('\n');
    }
    text.push_str("FINDINGS\n");
    for n in 1..=40 {
        text.push_str(&format!(
            "- [F{n}] minor src/f{n}.rs:{n} — finding number {n}\n"
        ));
    }
    text.push_str("VERDICT: FLAGS (40)\n");
    assert!(text.len() > 100_000);
    let started = std::time::Instant::now();
    let parsed = parse_findings(&text);
    let took = started.elapsed();
    let FindingsReply::Parsed { findings, .. } = parsed else {
        panic!("parses");
    };
    assert_eq!(findings.len(), 40);
    assert_eq!(findings[39].title, "finding number 40");
    println!("100 kB reply parsed in {took:?}");
    assert!(took < std::time::Duration::from_millis(200), "{took:?}");
    // The same reply without its verdict is unparsed, whatever it holds.
    let cut = text.trim_end().rsplit_once('\n').unwrap().0;
    assert!(matches!(
        parse_findings(cut),
        FindingsReply::Unparsed { .. }
    ));
}
