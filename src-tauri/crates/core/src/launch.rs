//! How the apps pick their OpenCode server: a URL from the command line or
//! `CROSSCHECK_OPENCODE_URL` (password from `OPENCODE_SERVER_PASSWORD`), else a managed
//! `opencode serve` from `CROSSCHECK_OPENCODE_BIN`, PATH, or the project's pinned npm install.

use std::path::{Path, PathBuf};

use crosscheck_opencode::{ServerConfig, SupervisorOptions};

use crate::core::OpencodeTarget;

/// Attach when a URL is given, else start and supervise `opencode serve`.
pub fn opencode_target(url: Option<String>) -> OpencodeTarget {
    match url {
        Some(base_url) => OpencodeTarget::Attach(ServerConfig {
            base_url: base_url.trim_end_matches('/').to_owned(),
            password: std::env::var("OPENCODE_SERVER_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty()),
        }),
        None => {
            let working_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            OpencodeTarget::Managed(SupervisorOptions {
                binary: std::env::var_os("CROSSCHECK_OPENCODE_BIN").map(PathBuf::from),
                search_dirs: search_dirs(std::env::current_exe().ok().as_deref()),
                working_dir,
                extra_env: Vec::new(),
            })
        }
    }
}

/// Folders whose `node_modules` may hold the pinned OpenCode: the executable's folder and its
/// ancestors, each with its `tests/` child (the project's pin). Never the working folder or
/// its ancestors: a repository opened there could ship a `node_modules/.bin/opencode` of its
/// own, and the app would run it.
fn search_dirs(exe: Option<&Path>) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = exe
        .map(|exe| {
            exe.ancestors()
                .skip(1)
                .take(6)
                .map(Path::to_path_buf)
                .collect()
        })
        .unwrap_or_default();
    let mut dirs = Vec::new();
    for root in roots {
        for dir in [root.clone(), root.join("tests")] {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// Sends the apps' logs to stderr, filtered by `CROSSCHECK_LOG` (default `warn`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CROSSCHECK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_working_folder_is_never_searched_for_opencode() {
        let OpencodeTarget::Managed(options) = opencode_target(None) else {
            panic!("no URL: a managed server");
        };
        let cwd = std::env::current_dir().unwrap();
        let exe = std::env::current_exe().unwrap();
        for dir in &options.search_dirs {
            let from_exe = exe.ancestors().any(|a| dir == a || *dir == a.join("tests"));
            assert!(from_exe, "{} is not next to the executable", dir.display());
        }
        // Folders the working folder has that the executable does not are never searched.
        let exe_roots: Vec<&Path> = exe.ancestors().collect();
        for a in cwd.ancestors().filter(|a| !exe_roots.contains(a)) {
            assert!(
                !options.search_dirs.iter().any(|d| d == a),
                "{}",
                a.display()
            );
        }
        assert_eq!(search_dirs(None), Vec::<PathBuf>::new());
    }
}
