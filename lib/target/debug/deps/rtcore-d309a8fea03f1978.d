/work/main/lib/target/debug/deps/rtcore-d309a8fea03f1978.d: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs Cargo.toml

/work/main/lib/target/debug/deps/librtcore-d309a8fea03f1978.rmeta: rtcore/src/lib.rs rtcore/src/hist.rs rtcore/src/ring.rs rtcore/src/uapi.rs Cargo.toml

rtcore/src/lib.rs:
rtcore/src/hist.rs:
rtcore/src/ring.rs:
rtcore/src/uapi.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
