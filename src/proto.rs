//! Generated protobuf and gRPC code for `checkpoint.v1`; nothing hand-written lives here.

#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod generated {
    tonic::include_proto!("checkpoint.v1");
}

pub use generated::*;

/// The encoded descriptor set that gRPC reflection serves.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("checkpoint_descriptor");
