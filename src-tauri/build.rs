//! Build script: lets Tauri generate the app context (config, icons, capabilities).
fn main() {
    tauri_build::build()
}
