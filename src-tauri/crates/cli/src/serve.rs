//! `crosscheck serve`: starts the core against an OpenCode server and serves web mode.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use crosscheck_core::api_types::{Change, Connection};
use crosscheck_core::launch::{StartedFrom, opencode_target};
use crosscheck_core::{Api, Core, CoreOptions};

/// Options of `crosscheck serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; loopback only.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port; 0 picks a free one. Without it, the port of the last start is used again (a free
    /// one when that is taken, with a line saying so), so the address stays the same.
    #[arg(long)]
    port: Option<u16>,
    /// Attach to this OpenCode server instead of starting one. Given more than once, the first
    /// is the main server and the others are followed beside it (a password may be given in
    /// the address: `http://:secret@127.0.0.1:4096`).
    #[arg(long, env = "CROSSCHECK_OPENCODE_URL")]
    opencode: Vec<String>,
    /// Serve the UI from this folder instead of the copy built into the binary (UI development).
    #[arg(long, env = "CROSSCHECK_UI_DIR")]
    ui_dir: Option<PathBuf>,
    /// Replace the kept web token with a new one (addresses with the old one stop working).
    #[arg(long)]
    new_token: bool,
}

/// Runs web mode until interrupted.
pub fn run(args: ServeArgs) -> ExitCode {
    crosscheck_core::launch::init_logging();
    if !args.host.is_loopback() {
        eprintln!(
            "crosscheck: refusing to listen on {}: web mode serves loopback only",
            args.host
        );
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("crosscheck: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("crosscheck: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let ui = match args.ui_dir {
        Some(dir) => crosscheck_web::UiSource::Dir(dir),
        None => crosscheck_web::UiSource::Embedded,
    };
    if ui == crosscheck_web::UiSource::Embedded && crosscheck_web::UI_MISSING {
        eprintln!(
            "crosscheck: this binary was built without the UI; the browser gets a page that says so (build the UI, then the binary, or pass --ui-dir)"
        );
    }
    let data_dir = crosscheck_review::paths::data_dir().map_err(|e| e.to_string())?;
    let token = crate::token::load_or_create(&data_dir, args.new_token).map_err(|e| {
        format!(
            "cannot keep the web token in {}: {e}",
            data_dir.join(crate::token::TOKEN_FILE).display()
        )
    })?;
    let mut urls = args.opencode.into_iter().filter(|u| !u.trim().is_empty());
    let main = urls
        .next()
        .map(|u| crosscheck_core::servers::url::split_password(&u));
    let mut target = opencode_target(main.as_ref().map(|m| m.0.clone()), StartedFrom::Terminal);
    if let (crosscheck_core::OpencodeTarget::Attach(config), Some((_, Some(password)))) =
        (&mut target, &main)
    {
        config.password = Some(password.clone());
    }
    let core = Core::start(CoreOptions {
        target,
        database: crosscheck_review::paths::database_path().map_err(|e| e.to_string())?,
    })
    .map_err(|e| e.to_string())?;
    for url in urls {
        let (base_url, password) = crosscheck_core::servers::url::split_password(&url);
        let config = crosscheck_opencode::ServerConfig { base_url, password };
        if let Err(e) = crosscheck_core::requests::server::add_unsaved(&core, config) {
            core.shutdown().await;
            return Err(format!("--opencode {}: {e}", url.trim()));
        }
    }
    let reporter = tokio::spawn(report_connection(core.clone()));
    let kept = crate::port::kept(&data_dir);
    let options = crosscheck_web::ServeOptions {
        addr: SocketAddr::new(args.host, args.port.or(kept).unwrap_or(0)),
        ui,
        token: token.clone(),
        limits: crosscheck_web::Limits::default(),
    };
    let api = Api::new(core.clone());
    let running = match crosscheck_web::serve(api.clone(), options.clone()).await {
        // The kept port is taken (another program, another Crosscheck): a free one instead.
        Err(crosscheck_web::Error::Bind { source, .. })
            if args.port.is_none() && kept.is_some() =>
        {
            let running = crosscheck_web::serve(
                api,
                crosscheck_web::ServeOptions {
                    addr: SocketAddr::new(args.host, 0),
                    ..options
                },
            )
            .await
            .map_err(|e| e.to_string())?;
            eprintln!(
                "crosscheck: port {} of the last start is not free ({source}); listening on port {} instead, so the address changed (bookmarks of the old one will not work)",
                kept.unwrap_or_default(),
                running.addr.port()
            );
            running
        }
        other => other.map_err(|e| e.to_string())?,
    };
    crate::port::keep(&data_dir, running.addr.port());
    println!(
        "Crosscheck listening on http://{}/?token={token}",
        running.addr
    );
    let outcome = tokio::select! {
        r = running.task => match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        },
        _ = shutdown_signal() => Ok(()),
    };
    reporter.abort();
    core.shutdown().await;
    outcome
}

/// Tells the terminal what became of the OpenCode server: where a managed one runs, and when
/// none could be found or started, what was looked for and what to do.
async fn report_connection(core: Core) {
    let mut changes = core.subscribe();
    let mut last = None;
    let mut show = |connection: Connection| {
        let line = match &connection {
            Connection::Ready {
                url,
                version,
                managed,
            } => match core.managed_folder() {
                Some(folder) if *managed => format!(
                    "OpenCode {version} started at {url}, in {}",
                    folder.display()
                ),
                _ => format!("Attached to OpenCode {version} at {url}"),
            },
            Connection::NotInstalled { looked } => format!(
                "crosscheck: OpenCode is not installed. Looked for:\n{}\n\
                 Install it (`npm install -g opencode-ai`, or see https://opencode.ai), or name the \
                 binary with CROSSCHECK_OPENCODE_BIN, or attach to a running server with \
                 `--opencode URL`. The page in the browser has a Retry button and a field for a URL.",
                looked
                    .iter()
                    .map(|l| format!("  - {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            Connection::Failed { error } => format!(
                "crosscheck: OpenCode could not be started or reached: {error}\n\
                 The page in the browser has a Retry button and a field for a URL."
            ),
            Connection::Connecting { .. } | Connection::Reconnecting { .. } => return,
        };
        if last.as_ref() != Some(&line) {
            eprintln!("{line}");
            last = Some(line);
        }
    };
    show(core.connection());
    loop {
        match changes.recv().await {
            Ok(stamped) => {
                if let Change::Connection { connection } = stamped.change {
                    show(connection);
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => show(core.connection()),
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
