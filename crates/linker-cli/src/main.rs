//! `culink`: the command-line CUDA device linker.

fn main() {
    eprintln!("culink: not yet wired");
    std::process::exit(2);
}
