//! The pure side of snapshot feeds (`mode = "snapshot"`): what a full
//! export changes against the rows held in its scopes ([`diff`]), and the
//! high-water marks that tell a late export from a newer one ([`marks`]).

pub mod diff;
pub mod marks;
