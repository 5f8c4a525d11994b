//! Interchange (interchange.md): bare streams, transport messages and the tensor
//! server.
//!
//! One test binary per area, so that the library is linked once for it; one
//! module per concern.

mod messages;
mod serve;
mod stream;
