//! `cargo run -p pacc-translate --example expand -- FILE [FUNCTION]`: prints the CUDA and host
//! Rust generated for the `#[pacc::pipeline]` functions of a file (what `pacc expand` shows).

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: expand FILE [FUNCTION]");
        std::process::exit(2);
    };
    let function = args.next();
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    match pacc_translate::expand_file(&src, function.as_deref()) {
        Ok(v) => {
            for e in v {
                println!("// ===== fn {}: CUDA =====\n{}", e.name, e.cuda);
                println!("// ===== fn {}: host Rust =====\n{}", e.name, e.host);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
