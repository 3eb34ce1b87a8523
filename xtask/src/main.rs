//! culink developer tasks.

fn main() {
    eprintln!("xtask: not yet wired");
    std::process::exit(2);
}
