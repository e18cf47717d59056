//! How messages and help texts list the names a setting takes.

/// `items` as a sentence lists them: `a, b or c` (one item alone, none empty).
///
/// ```
/// use pacc_runtime::words::sentence_list;
/// assert_eq!(sentence_list(["zfp", "f16"]), "zfp or f16");
/// assert_eq!(sentence_list(["a", "b", "c"]), "a, b or c");
/// assert_eq!(sentence_list(["a"]), "a");
/// assert_eq!(sentence_list(Vec::<String>::new()), "");
/// ```
pub fn sentence_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let items: Vec<S> = items.into_iter().collect();
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == items.len() { " or " } else { ", " });
        }
        out.push_str(item.as_ref());
    }
    out
}
