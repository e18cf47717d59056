//! The `.npy` format (numpy's, version 1.0 written, 1.0 to 3.0 read): what checkpoints store
//! their arrays in, so that `numpy.load` reads them. The writer fsyncs and returns the file's
//! CRC-32, which the checkpoint's `state.json` keeps.

use crate::program::Elem;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// The `descr` of an element type in this machine's byte order.
pub fn descr(elem: Elem) -> &'static str {
    match (elem, cfg!(target_endian = "little")) {
        (Elem::F32, true) => "<f4",
        (Elem::F64, true) => "<f8",
        (Elem::F32, false) => ">f4",
        (Elem::F64, false) => ">f8",
    }
}

/// The `.npy` (format 1.0) header of an array: magic, version, header length, the header dict
/// padded with spaces to a multiple of 64 bytes and ending in a newline.
pub fn npy_header(elem: Elem, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}",
        descr(elem)
    );
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut h = Vec::with_capacity(10 + dict.len());
    h.extend_from_slice(b"\x93NUMPY\x01\x00");
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

/// Writes `data` (elements of `elem` in C order, of `shape`) as a `.npy` file in pieces of
/// `piece` bytes, fsynced before it returns; returns its size and CRC-32.
pub fn write(
    path: &Path,
    elem: Elem,
    shape: &[usize],
    data: &[u8],
    piece: usize,
) -> std::io::Result<(u64, u32)> {
    let header = npy_header(elem, shape);
    let mut f = File::create(path)?;
    let mut crc = crc32fast::Hasher::new();
    f.write_all(&header)?;
    crc.update(&header);
    for piece in data.chunks(piece.max(1)) {
        f.write_all(piece)?;
        crc.update(piece);
    }
    f.sync_all()?;
    Ok(((header.len() + data.len()) as u64, crc.finalize()))
}

/// What a `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
    /// Offset of the data in the file.
    pub data_offset: usize,
}

/// Parses the header of a `.npy` file (versions 1.0 to 3.0) from its first bytes.
pub fn parse_npy_header(bytes: &[u8]) -> Result<NpyHeader, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let text = bytes
        .get(start..start + len)
        .ok_or("the .npy header is truncated")?;
    let text = std::str::from_utf8(text).map_err(|_| "the .npy header is not text")?;
    let value_after = |key: &str| -> Result<&str, String> {
        let k = format!("'{key}':");
        let i = text
            .find(&k)
            .ok_or_else(|| format!("the .npy header has no '{key}'"))?;
        Ok(text[i + k.len()..].trim_start())
    };
    let d = value_after("descr")?;
    let descr = d
        .strip_prefix('\'')
        .and_then(|r| r.split_once('\''))
        .map(|(v, _)| v.to_string())
        .ok_or("bad 'descr' in the .npy header")?;
    let f = value_after("fortran_order")?;
    let fortran_order = if f.starts_with("False") {
        false
    } else if f.starts_with("True") {
        true
    } else {
        return Err("bad 'fortran_order' in the .npy header".into());
    };
    let s = value_after("shape")?;
    let inner = s
        .strip_prefix('(')
        .and_then(|r| r.split_once(')'))
        .map(|(v, _)| v)
        .ok_or("bad 'shape' in the .npy header")?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<usize>()
                .map_err(|_| format!("bad shape entry `{t}`"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NpyHeader {
        descr,
        fortran_order,
        shape,
        data_offset: start + len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_back_and_align_the_data_on_64_bytes() {
        for shape in [vec![7], vec![3, 5], vec![1200, 1216, 1200]] {
            for elem in [Elem::F32, Elem::F64] {
                let h = npy_header(elem, &shape);
                assert_eq!(h.len() % 64, 0, "{shape:?}");
                assert_eq!(h.last(), Some(&b'\n'));
                let p = parse_npy_header(&h).unwrap();
                assert_eq!((p.descr.as_str(), p.fortran_order), (descr(elem), false));
                assert_eq!((p.shape, p.data_offset), (shape.clone(), h.len()));
            }
        }
        assert!(parse_npy_header(b"NUMPY not at all").is_err());
        let mut h = npy_header(Elem::F32, &[2, 2]);
        h.truncate(20);
        assert!(parse_npy_header(&h).unwrap_err().contains("truncated"));
    }
}
