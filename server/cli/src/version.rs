//! What `promptforge --version` says: the version and the commit it was built from.

/// `0.1.0 (0123456789ab)`; `, modified` when the checkout had uncommitted changes;
/// the version alone when it was not built from a git checkout.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("PROMPTFORGE_COMMIT"));
