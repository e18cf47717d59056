// Only f32 and f64 are grid elements: allocation hands out zeroed memory as values of the
// type, which would make this reference null.
use pacc::runtime::exec::GridElem;
use pacc::runtime::program::Elem;

#[derive(Clone, Copy)]
struct Borrowed(&'static f32);

impl GridElem for Borrowed {
    const ELEM: Elem = Elem::F32;
}

fn main() {}
