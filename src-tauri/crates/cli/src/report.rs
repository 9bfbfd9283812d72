//! `crosscheck review report [--cwd DIR]`: the newest review loop of a folder as markdown, the
//! same text as the review tab's "Copy report" (see `crosscheck_core::report`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The `crosscheck review` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum ReviewCommand {
    /// Print the newest review of a folder (its rounds, findings, coverage and final verdict)
    /// as markdown. Exits 0 when printed, 1 when the folder has none or it cannot be read.
    Report(ReportArgs),
}

/// Arguments of `crosscheck review report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The reviewed folder (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
}

/// Prints the report of the newest review recorded for the folder.
pub fn run(args: ReportArgs) -> ExitCode {
    let fail = |message: &str| {
        eprintln!("crosscheck review report: {message}");
        ExitCode::from(1)
    };
    let folder = match args.cwd.map_or_else(std::env::current_dir, Ok) {
        Ok(dir) => dir,
        Err(e) => return fail(&format!("no current directory: {e}")),
    };
    // The app records the folder as OpenCode has it: the real path.
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let database = match crosscheck_review::paths::database_path() {
        Ok(path) => path,
        Err(e) => return fail(&e.to_string()),
    };
    if !database.is_file() {
        return fail("no review has been recorded yet (Crosscheck's database does not exist)");
    }
    let report = crosscheck_core::db::Db::open(&database)
        .and_then(|db| crosscheck_core::report::newest_in(&db, &folder.to_string_lossy()));
    match report {
        Ok(Some(text)) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Ok(None) => fail(&format!(
            "no review loop or reviewed round is recorded for {}",
            folder.display()
        )),
        Err(e) => fail(&e.to_string()),
    }
}
