//! Build script: picks the folder the UI is embedded from. The built UI (`ui/dist` at the
//! workspace root, or `CROSSCHECK_UI_EMBED_DIR`) when it has an `index.html`; else the small
//! page in `missing-ui/`, which says the UI was not built, and a build warning.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=CROSSCHECK_UI_EMBED_DIR");
    println!("cargo:rustc-check-cfg=cfg(crosscheck_ui_missing)");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let built = std::env::var_os("CROSSCHECK_UI_EMBED_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../../ui/dist"));
    // A folder that does not exist makes cargo rerun this script on every build, so the UI
    // is picked up as soon as it is built; one that exists is rescanned when anything in it
    // changes.
    println!("cargo:rerun-if-changed={}", built.display());
    let folder = if built.join("index.html").is_file() {
        built
    } else {
        println!(
            "cargo:warning=the UI is not built ({} has no index.html): this binary serves a page that says so; run `make ui` and build again",
            built.display()
        );
        println!("cargo:rustc-cfg=crosscheck_ui_missing");
        manifest.join("missing-ui")
    };
    let folder = folder.canonicalize().unwrap_or(folder);
    println!("cargo:rustc-env=CROSSCHECK_UI_EMBED={}", folder.display());
}
