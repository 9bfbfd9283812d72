//! The servers Crosscheck follows: one [`handle::ServerHandle`] per server in a map keyed by
//! [`ServerId`](crate::model::ids::ServerId) (held by the core), the list the user saved
//! ([`saved`]), where its password is kept ([`secret`]) and how two addresses are told apart ([`url`]).

pub mod handle;
pub mod saved;
pub mod secret;
pub mod url;
