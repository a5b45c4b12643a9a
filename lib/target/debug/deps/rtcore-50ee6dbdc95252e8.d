/work/main/lib/target/debug/deps/rtcore-50ee6dbdc95252e8.d: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs

/work/main/lib/target/debug/deps/rtcore-50ee6dbdc95252e8: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs

rtcore/src/lib.rs:
rtcore/src/hist.rs:
rtcore/src/ring.rs:
rtcore/src/uapi.rs:
