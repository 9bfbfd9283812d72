//! How the apps pick their OpenCode server: a URL from the command line or
//! `CROSSCHECK_OPENCODE_URL` (password from `OPENCODE_SERVER_PASSWORD`), else a managed
//! `opencode serve` from `CROSSCHECK_OPENCODE_BIN`, PATH, or a pinned npm install next to the
//! executable; and the folder a managed server runs in.

use std::path::{Path, PathBuf};

use crosscheck_opencode::{ServerConfig, SupervisorOptions};

use crate::core::OpencodeTarget;

/// Which app starts the managed server: it decides the folder the server runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartedFrom {
    /// `crosscheck serve` in a terminal: the folder it was started from comes first.
    Terminal,
    /// The desktop app, which has no meaningful working folder: the last project comes first.
    Desktop,
    /// A server the user added for one folder: it runs there and nowhere else.
    Folder,
}

/// A managed server for one folder the user picked (found as [`opencode_target`] finds the
/// binary); it runs in `folder` only.
pub fn managed_in(folder: PathBuf) -> OpencodeTarget {
    match opencode_target(None, StartedFrom::Folder) {
        OpencodeTarget::Managed {
            mut options,
            started_from,
        } => {
            options.working_dir = folder;
            OpencodeTarget::Managed {
                options,
                started_from,
            }
        }
        attach => attach,
    }
}

/// Attach when a URL is given, else start and supervise `opencode serve`.
/// An empty URL (`CROSSCHECK_OPENCODE_URL=`) counts as none.
pub fn opencode_target(url: Option<String>, started_from: StartedFrom) -> OpencodeTarget {
    match url.filter(|u| !u.trim().is_empty()) {
        Some(base_url) => OpencodeTarget::Attach(ServerConfig {
            base_url: base_url.trim_end_matches('/').to_owned(),
            password: std::env::var("OPENCODE_SERVER_PASSWORD")
                .ok()
                .filter(|p| !p.is_empty()),
        }),
        None => {
            let working_dir = std::env::current_dir().unwrap_or_default();
            OpencodeTarget::Managed {
                options: SupervisorOptions {
                    binary: std::env::var_os("CROSSCHECK_OPENCODE_BIN")
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from),
                    search_dirs: search_dirs(std::env::current_exe().ok().as_deref()),
                    working_dir,
                    extra_env: Vec::new(),
                },
                started_from,
            }
        }
    }
}

/// Whether a managed server may run in `dir`: an existing folder that is neither `/` nor the
/// whole home folder (OpenCode would treat every file below it as the project).
pub fn usable_project_folder(dir: &Path, home: Option<&Path>) -> bool {
    dir.is_absolute()
        && dir.parent().is_some()
        && home.is_none_or(|h| !same_folder(dir, h))
        && dir.is_dir()
}

fn same_folder(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

/// The folder a managed server starts in: the terminal's folder, then the last project (the
/// desktop: the other way round), each only when [`usable_project_folder`]; else `fallback`
/// (a folder of Crosscheck's own in its data folder, created when needed).
pub fn managed_folder(
    started_from: StartedFrom,
    current: &Path,
    last_project: Option<&Path>,
    home: Option<&Path>,
    fallback: &Path,
) -> PathBuf {
    if started_from == StartedFrom::Folder {
        return if usable_project_folder(current, home) {
            current.to_path_buf()
        } else {
            fallback.to_path_buf()
        };
    }
    let mut order = [Some(current), last_project];
    if started_from == StartedFrom::Desktop {
        order.reverse();
    }
    order
        .into_iter()
        .flatten()
        .find(|d| usable_project_folder(d, home))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| fallback.to_path_buf())
}

/// Folders whose `node_modules` may hold a pinned OpenCode, all found from the executable:
/// a global npm install of `opencode-ai` under the same prefix (`<prefix>/lib/node_modules/
/// opencode-ai`, for an executable in `<prefix>/bin`), then the executable's folder and its
/// ancestors, each with its `tests/` child (a source checkout's pin). Never the working folder
/// or its ancestors: a repository opened there could ship a `node_modules/.bin/opencode` of
/// its own, and the app would run it.
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
    let mut dirs: Vec<PathBuf> = roots
        .get(1)
        .map(|prefix| prefix.join("lib/node_modules/opencode-ai"))
        .into_iter()
        .collect();
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
        let OpencodeTarget::Managed { options, .. } = opencode_target(None, StartedFrom::Terminal)
        else {
            panic!("no URL: a managed server");
        };
        let cwd = std::env::current_dir().unwrap();
        let exe = std::env::current_exe().unwrap();
        for dir in &options.search_dirs {
            let from_exe = exe.ancestors().any(|a| {
                dir == a
                    || *dir == a.join("tests")
                    || *dir == a.join("lib/node_modules/opencode-ai")
            });
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

    #[test]
    fn a_managed_server_never_runs_in_the_root_or_the_whole_home_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = home.join("project");
        let last = home.join("last");
        let fallback = tmp.path().join("data/workspace");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&last).unwrap();
        let pick = |from, current: &Path, last: Option<&Path>| {
            managed_folder(from, current, last, Some(&home), &fallback)
        };
        use StartedFrom::{Desktop, Terminal};
        // The terminal's folder first; the desktop's last project first.
        assert_eq!(pick(Terminal, &project, Some(&last)), project);
        assert_eq!(pick(Desktop, &project, Some(&last)), last);
        assert_eq!(pick(Desktop, &project, None), project);
        // Neither `/` nor the home folder (also spelt differently), nor a missing folder.
        assert_eq!(pick(Terminal, Path::new("/"), Some(&last)), last);
        assert_eq!(pick(Terminal, &home, None), fallback);
        assert_eq!(pick(Terminal, &home.join("project/.."), None), fallback);
        assert_eq!(pick(Desktop, &home, Some(Path::new("/"))), fallback);
        assert_eq!(
            pick(Desktop, &home, Some(&tmp.path().join("gone"))),
            fallback
        );
        // A server added for a folder runs there, never in the last project.
        assert_eq!(pick(StartedFrom::Folder, &project, Some(&last)), project);
        assert_eq!(pick(StartedFrom::Folder, &home, Some(&last)), fallback);
        let OpencodeTarget::Managed {
            options,
            started_from,
        } = managed_in(project.clone())
        else {
            panic!("a managed server");
        };
        assert_eq!(options.working_dir, project);
        assert_eq!(started_from, StartedFrom::Folder);
    }

    #[test]
    fn an_empty_url_means_a_managed_server() {
        for url in [Some(String::new()), Some("  ".into()), None] {
            assert!(matches!(
                opencode_target(url, StartedFrom::Terminal),
                OpencodeTarget::Managed { .. }
            ));
        }
        assert!(matches!(
            opencode_target(Some("http://127.0.0.1:4096/".into()), StartedFrom::Desktop),
            OpencodeTarget::Attach(c) if c.base_url == "http://127.0.0.1:4096"
        ));
    }

    #[test]
    fn a_global_npm_install_under_the_executables_prefix_is_searched() {
        let dirs = search_dirs(Some(Path::new("/opt/tools/bin/crosscheck")));
        assert_eq!(
            dirs[0],
            Path::new("/opt/tools/lib/node_modules/opencode-ai")
        );
        assert!(dirs.contains(&PathBuf::from("/opt/tools/bin")));
    }
}
