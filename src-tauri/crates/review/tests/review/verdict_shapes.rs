//! The 29 reply shapes that were recorded CLEAN although they hold a failing check (or no
//! checks at all): each is flagged or unparsed, never clean, by the parser and end to end.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic in a test is its failure

use crate::common::{ModelServer, PLAN, Reply, clean_reply, quick, rig};
use crosscheck_review::verdict::{ParsedReply, Verdict, parse_reply};
use crosscheck_review::{ReviewKind, ReviewRequest, ReviewSource, ReviewStatus};

fn shapes() -> Vec<(String, String)> {
    include_str!("../fixtures/verdict_shapes.md")
        .split("### ")
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let (name, text) = s.split_once('\n').unwrap();
            (name.trim().to_owned(), text.trim().to_owned())
        })
        .collect()
}

fn is_clean(parsed: &ParsedReply) -> bool {
    matches!(
        parsed,
        ParsedReply::Valid {
            verdict: Verdict::Clean,
            ..
        }
    )
}

#[test]
fn no_shape_with_a_failing_or_missing_check_parses_clean() {
    let shapes = shapes();
    assert_eq!(shapes.len(), 29);
    let clean: Vec<&str> = shapes
        .iter()
        .filter(|(_, text)| is_clean(&parse_reply(text, ReviewKind::Plan)))
        .map(|(name, _)| name.as_str())
        .collect();
    println!(
        "parsed CLEAN: {} of {}: {clean:?}",
        clean.len(),
        shapes.len()
    );
    assert!(clean.is_empty(), "parsed CLEAN: {clean:?}");
    // The well-formed clean reply still is.
    assert!(is_clean(&parse_reply(&clean_reply(), ReviewKind::Plan)));
}

#[tokio::test]
async fn no_shape_is_recorded_clean_even_after_the_repair_round() {
    let mut recorded = Vec::new();
    for (name, text) in shapes() {
        let server = ModelServer::start();
        server.always(Reply::Text(text));
        let rig = rig(&server.base, quick());
        let request = ReviewRequest::plan("/w", PLAN, ReviewSource::Draft);
        let decision = rig.engine.review(request).await.unwrap();
        recorded.push((name, decision.status, decision.outcome));
    }
    let clean: Vec<_> = recorded
        .iter()
        .filter(|(_, s, _)| *s == ReviewStatus::Clean)
        .collect();
    println!("recorded: {recorded:?}");
    assert!(clean.is_empty(), "recorded CLEAN: {clean:?}");
}
