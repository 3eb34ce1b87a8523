//! libFuzzer target: the cubin reader, the dump and the self-diff.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| culink_fuzz::cubin_reader(data));
