/work/main/lib/target/debug/deps/rtcore-7bd27ddfb1dd664e.d: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs

/work/main/lib/target/debug/deps/librtcore-7bd27ddfb1dd664e.rlib: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs

/work/main/lib/target/debug/deps/librtcore-7bd27ddfb1dd664e.rmeta: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs

rtcore/src/lib.rs:
rtcore/src/hist.rs:
rtcore/src/ring.rs:
rtcore/src/uapi.rs:
