//! Every request the UI can send, each paired with its response type and its handler in one
//! table ([`requests!`]). The table generates [`Request`] (what the UI sends), [`Response`]
//! (what a handler returns, serialized once by the transport) and `Responses`, a TypeScript-only
//! map from each `cmd` to its response type, so the UI's `invoke` infers the result from the
//! request. Handlers are small `async fn(&Core, Req) -> Result<Res>` in the module of their
//! domain.

pub mod attention;
pub mod catalog;
pub mod changes;
pub mod comments;
pub mod folders;
pub mod handoff;
pub mod history;
pub mod prompts;
pub mod review_loop;
pub mod reviews;
pub mod search;
pub mod server;
pub mod sessions;
pub mod settings;
pub mod transcripts;
pub mod turns;
pub mod worktrees;

use crosscheck_opencode::{AgentInfo, ProviderCatalog, Todo};
use crosscheck_review::LedgerEntry;
use crosscheck_review::settings::{ReviewerSettings, ReviewerTest};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::api_types::{
    CommandEntry, OlderPage, PromptTemplate, Sent, SessionView, Snapshot, TranscriptPage,
    TransferResult,
};
use crate::core::Core;
use crate::error::Result;
use crate::findings::FindingsView;
use crate::flows::FlowState;
use crate::flows::cold_review::{ReviewDetail, ReviewProgress};
use crate::flows::review_loop::LoopState;
use crate::settings::Settings;

pub use attention::{AnswerQuestion, SeeSessions, WithdrawFindings};
pub use catalog::{Agents, Commands, Providers};
pub use changes::{ChangeSet, Changes, Todos};
pub use comments::{AddComment, CloseComment, ListComments, SendComments};
pub use folders::{FolderChoices, Folders};
pub use handoff::{
    CancelFlow, CheckReviewPin, ListTransfers, SendFindings, StartHandoffReview, Transfer,
};
pub use history::{FindFiles, ForkSession, RevertSession, UnrevertSession};
pub use prompts::{ResetPrompt, SetPrompt};
pub use review_loop::{ListFindings, LoopSettings, ReviewReport, StartLoop, StopLoop};
pub use reviews::{ColdReview, GetReview, ListReviews, SetReviewerSettings};
pub use server::{
    AddManagedServer, AddServer, AttachServer, PasswordStorage, RenameServer, ServerRef,
};
pub use sessions::{ArchiveSession, CreateSession, DeleteSession, RenameSession};
pub use settings::{ActivateTab, CloseTab, MoveTab, OpenTab, SetSettings, ShowPair};
pub use transcripts::{CloseSession, LoadOlder, OpenSession};
pub use turns::{Abort, CommandStarted, ReplyPermission, RunCommand, SendPrompt};
pub use worktrees::{
    CreateWorktree, CreatedWorktree, InitRepository, MergeWorktree, MoveToWorktree, PreviewMerge,
    RemoveWorktree, Workplaces,
};

/// Declares the request table. `unit` requests carry no fields; `with` requests carry a struct
/// of their own; `per_client` requests also get the id of the client that sent them (what it
/// follows is counted for that client). Each row: `Variant [(Fields)] => ResponseType = handler;`.
macro_rules! requests {
    (
        unit { $( $(#[doc = $udoc:literal])* $unit:ident => $ures:ty = $uhandler:path; )* }
        per_client { $( $(#[doc = $cdoc:literal])* $cvariant:ident($creq:ty) => $cres:ty = $chandler:path; )* }
        with { $( $(#[doc = $doc:literal])* $variant:ident($req:ty) => $res:ty = $handler:path; )* }
    ) => {
        /// A request from the UI, serialized as `{"cmd": "...", ...fields}`.
        #[derive(Debug, Clone, Deserialize, Serialize, TS)]
        #[serde(tag = "cmd", rename_all = "camelCase")]
        #[ts(export)]
        pub enum Request {
            $( $(#[doc = $udoc])* $unit, )*
            $( $(#[doc = $cdoc])* $cvariant($creq), )*
            $( $(#[doc = $doc])* $variant($req), )*
        }

        /// What a request returns: serialized as the bare value (no tag), once, by the
        /// transport that carried the request.
        #[derive(Debug, Clone, Serialize)]
        #[serde(untagged)]
        pub enum Response {
            $( #[doc = concat!("The response to `", stringify!($unit), "`.")] $unit($ures), )*
            $( #[doc = concat!("The response to `", stringify!($cvariant), "`.")] $cvariant($cres), )*
            $( #[doc = concat!("The response to `", stringify!($variant), "`.")] $variant($res), )*
        }

        /// The response type of each request by its `cmd`: exported to TypeScript only, where
        /// `invoke(request)` looks its result type up here.
        #[derive(TS)]
        #[ts(export, rename_all = "camelCase")]
        #[allow(non_snake_case, dead_code)]
        pub struct Responses {
            $( $unit: $ures, )*
            $( $cvariant: $cres, )*
            $( $variant: $res, )*
        }

        /// Runs one request of `client` through its handler.
        pub async fn dispatch(core: &Core, client: &str, request: Request) -> Result<Response> {
            Ok(match request {
                $( Request::$unit => Response::$unit($uhandler(core).await?), )*
                $( Request::$cvariant(req) => Response::$cvariant($chandler(core, client, req).await?), )*
                $( Request::$variant(req) => Response::$variant($handler(core, req).await?), )*
            })
        }
    };
}

requests! {
    unit {
        /// Everything the UI needs to draw its first frame.
        Snapshot => Snapshot = sessions::snapshot;
        /// Prompt templates with defaults and overrides.
        Prompts => Vec<PromptTemplate> = prompts::list;
        /// Review loops: the running ones and the newest that ended.
        ListLoops => Vec<LoopState> = review_loop::list_loops;
        /// Starts or attaches to the OpenCode server again (the Retry button).
        Reconnect => () = server::reconnect;
        /// The Reviewer settings: route, floor and which direct keys are there.
        ReviewerSettings => ReviewerSettings = reviews::reviewer_settings;
        /// Runs a tiny review through the configured route; nothing is recorded.
        TestReviewer => ReviewerTest = reviews::test_reviewer;
        /// The settings as they are before the user changes any (what "Reset to defaults" uses).
        DefaultSettings => Settings = settings::default_settings;
        /// Where saved servers' passwords are kept (the system keyring or a file).
        PasswordStorage => PasswordStorage = server::password_storage;
    }
    per_client {
        /// Starts following a session's transcript for the client; answers its newest page.
        OpenSession(OpenSession) => TranscriptPage = transcripts::open;
        /// Stops following a transcript the client no longer shows.
        CloseSession(CloseSession) => () = transcripts::close;
    }
    with {
        /// The folders New session suggests: recent ones and the server's known ones.
        Folders(Folders) => FolderChoices = folders::list;
        /// Loads the page before the oldest loaded message.
        LoadOlder(LoadOlder) => OlderPage = transcripts::load_older;
        /// Attaches to the OpenCode server at a URL instead of the current one.
        AttachServer(AttachServer) => () = server::attach;
        /// Adds an attached server beside the others (saved; the same URL twice is refused).
        AddServer(AddServer) => crate::api_types::ServerView = server::add;
        /// Starts `opencode serve` in a folder and follows it (saved; one server per folder).
        AddManagedServer(AddManagedServer) => crate::api_types::ServerView = server::add_managed;
        /// Renames a server.
        RenameServer(RenameServer) => crate::api_types::ServerView = server::rename;
        /// Starts following one server anew.
        ReconnectServer(ServerRef) => () = server::reconnect_server;
        /// Stops following a server and forgets it.
        RemoveServer(ServerRef) => () = server::remove;
        /// Creates a session in a directory.
        CreateSession(CreateSession) => SessionView = sessions::create;
        /// Renames a session.
        RenameSession(RenameSession) => SessionView = sessions::rename;
        /// Archives or unarchives a session.
        ArchiveSession(ArchiveSession) => SessionView = sessions::archive;
        /// Deletes a session (with review-link clean-up).
        DeleteSession(DeleteSession) => () = sessions::delete;
        /// Sends a user message (with files; reverting first for an edit).
        SendPrompt(SendPrompt) => Sent = turns::send_prompt;
        /// Reverts a session to a user message: it and everything after it are undone.
        RevertSession(RevertSession) => SessionView = history::revert;
        /// Brings back what a revert undid.
        UnrevertSession(UnrevertSession) => SessionView = history::unrevert;
        /// Forks a session before a message; answers the new session.
        ForkSession(ForkSession) => SessionView = history::fork;
        /// Files of a session's folder matching an `@` mention, best first.
        FindFiles(FindFiles) => Vec<String> = history::find_files;
        /// Runs a slash command (a server command or one of Crosscheck's).
        RunCommand(RunCommand) => CommandStarted = turns::run_command;
        /// Stops the running turn.
        Abort(Abort) => () = turns::abort;
        /// Answers a pending permission request.
        ReplyPermission(ReplyPermission) => () = turns::reply_permission;
        /// The person looks at these sessions: what seeing settles goes from their attention.
        SeeSessions(SeeSessions) => () = attention::see_sessions;
        /// Answers (or rejects) a question OpenCode's `question` tool asks.
        AnswerQuestion(AnswerQuestion) => () = attention::answer_question;
        /// Accepts the implementer's dispute of findings after a loop stopped: they are withdrawn.
        WithdrawFindings(WithdrawFindings) => FindingsView = attention::withdraw_findings;
        /// Providers and models for the picker.
        Providers(Providers) => ProviderCatalog = catalog::providers;
        /// Agents for the picker.
        Agents(Agents) => Vec<AgentInfo> = catalog::agents;
        /// Slash commands for autocomplete: Crosscheck's own first, then the server's.
        Commands(Commands) => Vec<CommandEntry> = catalog::commands;
        /// Saves settings; answers the saved settings.
        SetSettings(SetSettings) => Settings = settings::set_settings;
        /// Opens (or focuses) a context panel tab.
        OpenTab(OpenTab) => () = settings::open_tab;
        /// Closes a context panel tab.
        CloseTab(CloseTab) => () = settings::close_tab;
        /// Makes a context panel tab the active one.
        ActivateTab(ActivateTab) => () = settings::activate_tab;
        /// Moves a context panel tab to another place.
        MoveTab(MoveTab) => () = settings::move_tab;
        /// Searches inside transcripts: the held ones at once, the others read in the background
        /// (`Search` changes); answers what the held ones matched.
        SearchTranscripts(search::SearchTranscripts) => crate::search::SearchProgress = search::search_transcripts;
        /// Shows a session in the main view and its partner in the panel's follow tab.
        ShowPair(ShowPair) => () = settings::show_pair_of;
        /// Overrides a prompt template.
        SetPrompt(SetPrompt) => PromptTemplate = prompts::set;
        /// Resets a prompt template to its default.
        ResetPrompt(ResetPrompt) => PromptTemplate = prompts::reset;
        /// Starts the review handoff for a session (or answers the one already running).
        StartHandoffReview(StartHandoffReview) => FlowState = handoff::start;
        /// Cancels a running flow and waits for it to stop; answers whether it ended cancelled.
        CancelFlow(CancelFlow) => bool = handoff::cancel;
        /// Sends an assistant message's text to the linked session.
        Transfer(Transfer) => TransferResult = handoff::transfer;
        /// Sends only the chosen findings of a reviewer's reply to the implementer.
        SendFindings(SendFindings) => TransferResult = handoff::send_findings;
        /// What was sent from a session's messages to its linked session (the sent marks).
        ListTransfers(ListTransfers) => Vec<crate::transfer_log::TransferRecord> = handoff::list_transfers;
        /// What a review session's newest reply saw of the code, and whether it is stale now.
        CheckReviewPin(CheckReviewPin) => Option<crate::review_pin::ReviewPin> = handoff::check_review_pin;
        /// Starts a cold review of a plan from a session; it runs in the background.
        ColdReview(ColdReview) => ReviewProgress = reviews::cold_review;
        /// Cold reviews in the ledger (the app's and every gate's), newest first.
        ListReviews(ListReviews) => Vec<LedgerEntry> = reviews::list;
        /// One ledger row with the text it was reviewed on, or `null` when it is gone.
        GetReview(GetReview) => Option<ReviewDetail> = reviews::detail;
        /// The findings of a review link (either session), with each one's round history.
        ListFindings(ListFindings) => FindingsView = review_loop::list_findings;
        /// The review link's history as markdown, for a pull request (none before a round).
        ReviewReport(ReviewReport) => Option<String> = review_loop::review_report;
        /// Saves the Reviewer settings (route, floor) into the user's review.json.
        SetReviewerSettings(SetReviewerSettings) => ReviewerSettings = reviews::set_reviewer_settings;
        /// Starts the automatic review loop of a pair (or answers the running one).
        StartLoop(StartLoop) => LoopState = review_loop::start_loop;
        /// Stops a pair's review loop; answers its final state.
        StopLoop(StopLoop) => Option<LoopState> = review_loop::stop_loop;
        /// The files a session changed in one scope (a review session: its original's).
        Changes(Changes) => ChangeSet = changes::changes;
        /// A session's todo list.
        Todos(Todos) => Vec<Todo> = changes::todos;
        /// Writes a line comment into the session's batch; answers its comments.
        AddComment(AddComment) => Vec<crate::comments::LineComment> = comments::add;
        /// A session's line comments, checked against their lines now.
        ListComments(ListComments) => Vec<crate::comments::LineComment> = comments::list;
        /// Closes a line comment (a draft leaves the batch); answers the session's comments.
        CloseComment(CloseComment) => Vec<crate::comments::LineComment> = comments::close;
        /// Sends the batch of draft comments to the implementer (or hands it to the loop).
        SendComments(SendComments) => crate::comments::SendOutcome = comments::send;
        /// Where each folder works: repository, branch, worktree or not, gone.
        Workplaces(Workplaces) => Vec<crate::worktree::Workplace> = worktrees::workplaces;
        /// Makes a new worktree (and branch) of a folder's repository through the server.
        CreateWorktree(CreateWorktree) => CreatedWorktree = worktrees::create;
        /// Moves a started session into a new worktree with its uncommitted changes.
        MoveToWorktree(MoveToWorktree) => SessionView = worktrees::move_to_worktree;
        /// Makes a folder a git repository.
        InitRepository(InitRepository) => () = worktrees::init_repository;
        /// What merging a session's worktree back would bring: commits and files.
        MergePreview(PreviewMerge) => crate::worktree::merge::MergePreview = worktrees::preview;
        /// Merges a session's worktree back into the main checkout (aborted on a conflict).
        MergeWorktree(MergeWorktree) => crate::worktree::merge::MergeOutcome = worktrees::merge_back;
        /// Removes a worktree and its branch.
        RemoveWorktree(RemoveWorktree) => () = worktrees::remove;
    }
}
