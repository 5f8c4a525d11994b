//! Reading from a source that may deliver fewer bytes than asked for.

/// Fills `buf` from `source` as far as it goes; returns how many bytes it got
/// (fewer only at the end of the source).
pub(super) fn read_up_to<R: std::io::Read>(
    source: &mut R,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match source.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
