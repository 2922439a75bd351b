//! The seam through which the analysis layer sees files: it does no I/O itself.
//! A front end (or the engine, for every file a user names) implements
//! [`SourceFiles`] with its bounded reader; a test implements it over a map.

use std::io;
use std::path::Path;

/// Where the analysis reads a file it needs beyond the text it was given (the
/// prompt a test file names).
pub trait SourceFiles {
    /// The bytes of the file at `path`, read as the front end reads every file a
    /// user names (within its size limit, never a device or a pipe).
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
}
