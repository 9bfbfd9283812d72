//! The page a browser gets instead of the app when its address has no token or a wrong one:
//! what the token is for and where to find the address that carries it. English and German,
//! picked from `Accept-Language`.

/// Why the token was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No token in the address and none remembered by this browser.
    Missing,
    /// A token that is not the current one (an old link, or one replaced by `--new-token`).
    Wrong,
}

struct Texts {
    lang: &'static str,
    title: &'static str,
    missing: &'static str,
    wrong: &'static str,
    why: &'static str,
    how: &'static str,
    printed: &'static str,
    kept: &'static str,
}

const EN: Texts = Texts {
    lang: "en",
    title: "Crosscheck needs its access token",
    missing: "This address has no access token.",
    wrong: "The access token in this address is not the current one.",
    why: "Crosscheck's web mode answers only browsers that know its token, so other programs and web pages on this computer cannot use it.",
    how: "Open the full address that <code>crosscheck serve</code> printed when it started, token included:",
    printed: "Crosscheck listening on",
    kept: "The token stays the same when Crosscheck restarts. <code>crosscheck serve --new-token</code> makes a new one; addresses with the old token then lead here.",
};

const DE: Texts = Texts {
    lang: "de",
    title: "Crosscheck braucht sein Zugangs-Token",
    missing: "Diese Adresse enthält kein Zugangs-Token.",
    wrong: "Das Zugangs-Token in dieser Adresse ist nicht das aktuelle.",
    why: "Der Web-Modus von Crosscheck antwortet nur Browsern, die sein Token kennen, damit andere Programme und Webseiten auf diesem Rechner ihn nicht benutzen können.",
    how: "Öffnen Sie die vollständige Adresse mit Token, die <code>crosscheck serve</code> beim Start ausgegeben hat:",
    printed: "Crosscheck listening on",
    kept: "Das Token bleibt gleich, wenn Crosscheck neu startet. <code>crosscheck serve --new-token</code> erzeugt ein neues; Adressen mit dem alten Token führen dann hierher.",
};

/// German when the browser prefers it over English, else English.
fn texts(accept_language: &str) -> &'static Texts {
    for range in accept_language.split(',') {
        let tag = range
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if tag == "de" || tag.starts_with("de-") {
            return &DE;
        }
        if tag == "en" || tag.starts_with("en-") {
            return &EN;
        }
    }
    &EN
}

/// The page's HTML for a server on `port`.
pub(crate) fn render(refusal: Refusal, port: u16, accept_language: &str) -> String {
    let t = texts(accept_language);
    let (reason, first) = match refusal {
        Refusal::Missing => ("missing", t.missing),
        Refusal::Wrong => ("wrong", t.wrong),
    };
    format!(
        r#"<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1f2328; }}
main {{ max-width: 36rem; margin: 12vh auto 0; padding: 2rem 2.25rem; background: #fff; border: 1px solid #d8dde3; border-radius: 10px; }}
h1 {{ font-size: 1.3rem; margin: 0 0 1rem; }}
p {{ margin: 0 0 0.9rem; }}
code, pre {{ font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.9em; background: #f2f3f5; border-radius: 4px; }}
code {{ padding: 0.05em 0.3em; white-space: nowrap; }}
pre {{ padding: 0.6rem 0.8rem; overflow-x: auto; margin: 0 0 0.9rem; }}
.first {{ font-weight: 600; }}
@media (prefers-color-scheme: dark) {{
  body {{ background: #16181c; color: #e6e8eb; }}
  main {{ background: #1f2227; border-color: #343840; }}
  code, pre {{ background: #2a2e35; }}
}}
</style>
</head>
<body>
<main data-testid="token-page" data-reason="{reason}">
<h1>{title}</h1>
<p class="first">{first}</p>
<p>{why}</p>
<p>{how}</p>
<pre>{printed} http://127.0.0.1:{port}/?token=…</pre>
<p>{kept}</p>
</main>
</body>
</html>
"#,
        lang = t.lang,
        title = t.title,
        why = t.why,
        how = t.how,
        printed = t.printed,
        kept = t.kept,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_follows_the_browser() {
        assert!(render(Refusal::Missing, 1, "de-DE,de;q=0.9,en;q=0.8").contains("lang=\"de\""));
        assert!(render(Refusal::Missing, 1, "en-US,de;q=0.5").contains("lang=\"en\""));
        assert!(render(Refusal::Missing, 1, "fr").contains("lang=\"en\""));
        assert!(render(Refusal::Wrong, 4242, "").contains("127.0.0.1:4242/?token="));
    }
}
