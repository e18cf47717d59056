use super::*;

/// A fresh folder for one test (the tests run in parallel and must not share files).
fn folder(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pacc-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Entries as the three kinds write them.
const SAMPLES: [(Kind, &str, &[u8]); 3] = [
    (
        Kind::Cubin,
        "pacc 0.1.0 cubin sm_90 fmad=false nvrtc (13, 0)\nextern \"C\" __global__ void k() {}",
        // Machine code is binary: an ELF header, NUL bytes, bytes that are not UTF-8.
        b"\x7fELF\x02\x01\x01\x33\0\0\0\xff\xfe\n\x00\x80",
    ),
    (
        Kind::Rates,
        "pacc 0.1.0 kernel rates\ndevice H100\nprogram heat\nsource\n__global__ void k() {}",
        b"158500000000.0 36700000000.0",
    ),
    (
        Kind::Link,
        "pacc 0.1.0 link rates\ndevice H100 ordinal 0 of 1\nhost gpu-1\n",
        b"53900000000.0 54700000000.0 81200000000.0 268435456",
    ),
];

/// One test touches the environment, so its cases run in order.
#[test]
fn stores_loads_and_misses_on_any_difference() {
    let d = folder("env");
    std::env::set_var("PACC_CACHE_DIR", &d);
    let key = "sm_90 fma=0\nsource";
    assert_eq!(load(Kind::Cubin, key), None);
    store(Kind::Cubin, key, ".version 8.0\nptx");
    assert_eq!(load(Kind::Cubin, key).as_deref(), Some(".version 8.0\nptx"));
    assert_eq!(load(Kind::Rates, key), None, "each kind in its own folder");
    assert_eq!(
        load(Kind::Cubin, "sm_90 fma=1\nsource"),
        None,
        "other options"
    );
    assert_eq!(
        load(Kind::Cubin, "sm_90 fma=0\nsourcf"),
        None,
        "other source"
    );
    // A file whose name matches but whose key does not (a collision) is a miss.
    let abc = Entry::new(Kind::Cubin, "abc").unwrap();
    std::fs::write(&abc.path, encode("abd", b"value")).unwrap();
    assert_eq!(load(Kind::Cubin, "abc"), None);
    std::env::set_var("PACC_CACHE_DIR", "off");
    assert_eq!(load(Kind::Cubin, key), None, "off");
    store(Kind::Cubin, "x", "y");
    let built: Result<u32, ()> =
        load_or_build(Kind::Cubin, key, |_| Some(1), || Ok((2, b"2".to_vec())));
    assert_eq!(built, Ok(2), "off: always built");
    std::env::remove_var("PACC_CACHE_DIR");
    let _ = std::fs::remove_dir_all(&d);
}

/// What an entry's file may look like after a crash, a full disk, another program or another
/// version of pacc: each must read as a miss.
fn damaged(good: &[u8]) -> Vec<(String, Vec<u8>)> {
    let head = good.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut out = Vec::new();
    for cut in [0, 1, head - 1, head, head + 3, good.len() - 1] {
        out.push((format!("truncated to {cut} bytes"), good[..cut].to_vec()));
    }
    for at in [0, 14, 20, head + 2, good.len() - 1] {
        let mut b = good.to_vec();
        b[at] ^= 0x01;
        out.push((format!("byte {at} flipped"), b));
    }
    out.push(("bytes appended".into(), [good, b"\0\0"].concat()));
    out.push(("an empty file".into(), Vec::new()));
    out.push(("no header".into(), b"3\nabcvalue".to_vec()));
    out.push(("the header only".into(), good[..head].to_vec()));
    out
}

#[test]
fn a_damaged_entry_of_each_kind_is_a_miss_and_is_rewritten() {
    let d = folder("damaged");
    for (kind, key, value) in SAMPLES {
        let e = Entry::in_folder(&d.join(kind.folder()), key);
        e.store(value);
        assert_eq!(e.load().as_deref(), Some(value), "{kind:?}");
        let good = std::fs::read(&e.path).unwrap();
        for (what, bytes) in damaged(&good) {
            std::fs::write(&e.path, &bytes).unwrap();
            assert_eq!(e.load(), None, "{kind:?}: {what}");
            e.store(value);
            assert_eq!(
                e.load().as_deref(),
                Some(value),
                "{kind:?}: rewritten after {what}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_entry_that_cannot_be_used_is_built_again_and_overwritten() {
    let d = folder("unusable");
    let e = Entry::in_folder(&d, "key");
    let bytes = |s: &str| s.as_bytes().to_vec();
    // A miss builds and stores; the next look-up uses the stored value.
    let v: Result<Vec<u8>, ()> = e.load_or_build(Some, || Ok((bytes("new"), bytes("new"))));
    assert_eq!(v, Ok(bytes("new")));
    let v: Result<Vec<u8>, ()> = e.load_or_build(Some, || panic!("a hit builds nothing"));
    assert_eq!(v, Ok(bytes("new")));
    // An intact entry the caller refuses (machine code the driver does not load) is replaced.
    e.store(b"refused");
    let usable = |s: Vec<u8>| (s != b"refused").then_some(s);
    let v: Result<Vec<u8>, ()> = e.load_or_build(usable, || Ok((bytes("elf"), bytes("elf"))));
    assert_eq!(v, Ok(bytes("elf")));
    assert_eq!(e.load(), Some(bytes("elf")));
    // A failed build is the caller's error and leaves the entry as it was.
    e.store(b"refused");
    let v: Result<Vec<u8>, &str> = e.load_or_build(usable, || Err("nvrtc failed"));
    assert_eq!(v, Err("nvrtc failed"));
    assert_eq!(e.load(), Some(bytes("refused")));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn writers_of_one_key_on_several_threads_never_mix_their_entries() {
    let d = folder("threads");
    let e = Entry::in_folder(&d, "one key");
    let len = 1 << 16;
    let seen = std::thread::scope(|s| {
        let threads: Vec<_> = (0..8u8)
            .map(|t| {
                let e = &e;
                s.spawn(move || {
                    let mine = vec![b'a' + t; len];
                    let mut seen = 0;
                    for _ in 0..40 {
                        e.store(&mine);
                        if let Some(v) = e.load() {
                            let first = v[0];
                            assert!(v.len() == len && v.iter().all(|&c| c == first));
                            seen += 1;
                        }
                    }
                    seen
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum::<usize>()
    });
    // Every thread read back a whole entry after each of its writes.
    assert_eq!(seen, 8 * 40);
    let files: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "no temporary file left: {files:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn temporary_names_differ_for_every_write() {
    let p = Path::new("/cache/cubin/0123abcd-99");
    let names: std::collections::HashSet<PathBuf> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..100).map(|_| temporary(p)).collect::<Vec<_>>()))
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(names.len(), 400);
    assert!(names.iter().all(|n| n.parent() == p.parent()));
    let ext = |n: &PathBuf| n.extension().unwrap().to_str().unwrap().to_string();
    assert!(names.iter().all(|n| ext(n).starts_with(TMP)), "{names:?}");
}

#[test]
fn old_temporary_files_are_swept_and_nothing_else() {
    let d = folder("sweep");
    std::fs::create_dir_all(&d).unwrap();
    let e = Entry::in_folder(&d, "key");
    e.store(b"value");
    let old = [temporary(&e.path), e.path.with_extension("tmp4242")];
    let fresh = temporary(&e.path);
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 3600);
    for p in &old {
        let f = std::fs::File::create(p).unwrap();
        f.set_modified(hour_ago).unwrap();
    }
    std::fs::write(&fresh, b"a writer at work").unwrap();
    let entry = std::fs::File::options().write(true).open(&e.path).unwrap();
    entry.set_modified(hour_ago).unwrap();
    sweep(&d, STALE);
    assert!(
        old.iter().all(|p| !p.exists()),
        "stale temporary files removed"
    );
    assert!(fresh.exists(), "a temporary file being written is kept");
    assert_eq!(
        e.load().as_deref(),
        Some(&b"value"[..]),
        "entries are kept, however old"
    );
    let _ = std::fs::remove_dir_all(&d);
}
