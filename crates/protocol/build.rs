//! Generates the gRPC code and the descriptor set that server reflection serves.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A vendored protoc keeps the build free of system packages.
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let include = protoc_bin_vendored::include_path()?;
    // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("PROTOC", protoc) };

    let client = std::env::var_os("CARGO_FEATURE_CLIENT").is_some();
    let server = std::env::var_os("CARGO_FEATURE_SERVER").is_some();
    let protos = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .build_client(client)
        .build_transport(client)
        .build_server(server)
        .file_descriptor_set_path(out_dir.join("checkpoint_descriptor.bin"))
        .compile_protos(
            &[
                protos.join("checkpoint/v1/checkpoint.proto"),
                protos.join("checkpoint/v1/task.proto"),
                protos.join("checkpoint/v1/notification.proto"),
            ],
            &[protos.clone(), include],
        )?;
    println!("cargo:rerun-if-changed={}", protos.display());
    Ok(())
}
