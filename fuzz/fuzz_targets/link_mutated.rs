//! libFuzzer target: a mutated object linked with real fixture objects.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| culink_fuzz::link_mutated(data));
