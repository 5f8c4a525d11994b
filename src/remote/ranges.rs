//! Byte ranges: `Content-Range` values, and merging the ranges a prefetch names
//! into few requests.

/// A `Content-Range: bytes first-last/total` value: the half-open range
/// `start..end` and the total length (`None` for `*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ContentRange {
    pub start: u64,
    pub end: u64,
    pub total: Option<u64>,
}

/// Parses a `Content-Range` value. `bytes */total` (an unsatisfiable range) gives
/// an empty range at 0 with the total; anything malformed gives `None`.
pub(crate) fn parse_content_range(value: &str) -> Option<ContentRange> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse::<u64>().ok()?),
    };
    if range.trim() == "*" {
        return Some(ContentRange {
            start: 0,
            end: 0,
            total: Some(total?),
        });
    }
    let (first, last) = range.trim().split_once('-')?;
    let (first, last) = (first.parse::<u64>().ok()?, last.parse::<u64>().ok()?);
    let end = last.checked_add(1)?;
    if first > last || total.is_some_and(|t| end > t) {
        return None;
    }
    Some(ContentRange {
        start: first,
        end,
        total,
    })
}

/// Sorts the half-open ranges `(start, end)` and merges those that overlap or lie
/// within `gap` bytes of each other, as long as a merged range stays at most
/// `max_len` bytes (a single range longer than that is kept as it is).
pub(crate) fn coalesce(mut ranges: Vec<(u64, u64)>, gap: u64, max_len: u64) -> Vec<(u64, u64)> {
    ranges.retain(|&(s, e)| e > s);
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        if let Some(last) = out.last_mut() {
            let joined_end = last.1.max(e);
            if s <= last.1.saturating_add(gap) && joined_end - last.0 <= max_len {
                last.1 = joined_end;
                continue;
            }
        }
        out.push((s, e));
    }
    out
}

/// The `Range` header value asking for the half-open ranges given.
pub(crate) fn range_header(ranges: &[(u64, u64)]) -> String {
    let parts: Vec<String> = ranges
        .iter()
        .map(|&(s, e)| format!("{s}-{}", e - 1))
        .collect();
    format!("bytes={}", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_parse_strictly() {
        let r = parse_content_range("bytes 10-19/100").expect("parses");
        assert_eq!((r.start, r.end, r.total), (10, 20, Some(100)));
        assert_eq!(
            parse_content_range("bytes */0"),
            Some(ContentRange {
                start: 0,
                end: 0,
                total: Some(0)
            })
        );
        assert_eq!(
            parse_content_range("bytes 0-9/*").map(|r| r.total),
            Some(None)
        );
        for bad in [
            "bytes 10-9/100",
            "bytes 0-100/100",
            "bytes 0-1",
            "items 0-1/2",
            "bytes -1-2/3",
            "bytes 0-18446744073709551615/5",
        ] {
            assert_eq!(parse_content_range(bad), None, "{bad}");
        }
    }

    #[test]
    fn nearby_ranges_merge_within_bounds() {
        let got = coalesce(
            vec![(100, 110), (0, 10), (12, 20), (5, 8), (50, 50)],
            4,
            1000,
        );
        assert_eq!(got, [(0, 20), (100, 110)]);
        // A merge that would pass max_len is not made.
        assert_eq!(
            coalesce(vec![(0, 10), (10, 20)], 0, 15),
            [(0, 10), (10, 20)]
        );
        assert_eq!(range_header(&[(0, 10), (20, 21)]), "bytes=0-9,20-20");
    }
}
