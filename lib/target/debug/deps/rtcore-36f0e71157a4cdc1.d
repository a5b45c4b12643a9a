/work/main/lib/target/debug/deps/rtcore-36f0e71157a4cdc1.d: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs Cargo.toml

/work/main/lib/target/debug/deps/librtcore-36f0e71157a4cdc1.rmeta: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs Cargo.toml

rtcore/src/lib.rs:
rtcore/src/hist.rs:
rtcore/src/ring.rs:
rtcore/src/uapi.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
