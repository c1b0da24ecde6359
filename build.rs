//! Generates the gRPC code and the descriptor set that server reflection serves.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A vendored protoc keeps the build free of system packages.
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let include = protoc_bin_vendored::include_path()?;
    // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("PROTOC", protoc) };

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .file_descriptor_set_path(out_dir.join("checkpoint_descriptor.bin"))
        .compile_protos(
            &[
                PathBuf::from("proto/checkpoint/v1/checkpoint.proto"),
                PathBuf::from("proto/checkpoint/v1/task.proto"),
            ],
            &[PathBuf::from("proto"), include],
        )?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
