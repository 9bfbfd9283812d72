//! The words a batch of line comments goes to the implementer in: per comment the file, the
//! line or lines, the quoted lines and what the person wrote. No ids, no routing: a person's
//! review, as the seed's prompts read.

use super::LineComment;

/// The comments as text, one paragraph each, in file and line order.
pub fn comments_text(comments: &[LineComment]) -> String {
    let mut sorted: Vec<&LineComment> = comments.iter().collect();
    sorted.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(a.start_line.cmp(&b.start_line))
            .then(a.created_at.cmp(&b.created_at))
    });
    let mut out = String::new();
    for c in sorted {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        if c.start_line == c.end_line {
            out.push_str(&format!("{}, line {}:\n", c.path, c.start_line));
        } else {
            out.push_str(&format!(
                "{}, lines {}-{}:\n",
                c.path, c.start_line, c.end_line
            ));
        }
        for line in c.quote.lines() {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(c.body.trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comment::CommentStatus;

    fn comment(path: &str, start: u32, end: u32, quote: &str, body: &str) -> LineComment {
        LineComment {
            id: format!("cmt_{path}_{start}"),
            session_id: "ses_1".into(),
            path: path.into(),
            start_line: start,
            end_line: end,
            quote: quote.into(),
            body: body.into(),
            status: CommentStatus::Draft,
            created_at: 1,
            sent_at: None,
            message_id: None,
            updated_at: 1,
        }
    }

    #[test]
    fn each_comment_names_its_file_and_lines_quotes_them_and_carries_no_id() {
        let text = comments_text(&[
            comment("src/b.rs", 2, 3, "let a = 1;\nlet b = 2;", "Name these."),
            comment("src/a.rs", 7, 7, "panic!()", " Do not panic here. "),
        ]);
        assert_eq!(
            text,
            "src/a.rs, line 7:\n> panic!()\nDo not panic here.\n\n\
             src/b.rs, lines 2-3:\n> let a = 1;\n> let b = 2;\nName these."
        );
        assert!(!text.contains("cmt_"), "{text}");
        assert!(!text.contains("ses_"), "{text}");
    }
}
