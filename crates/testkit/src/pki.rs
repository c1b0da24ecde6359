//! Certificates made at test time: a CA, server certificates for chosen names, client
//! certificates, all written as PEM files in a temporary directory. Nothing is checked in.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A test certificate authority and the files it wrote.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
    dir: tempfile::TempDir,
}

/// A certificate and its key, as PEM files.
#[derive(Clone, Debug)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TestCa {
    /// A new CA named `name`, with its certificate in `ca.pem`.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("CA key");
        let issuer = CertifiedIssuer::self_signed(params, key).expect("self-sign the CA");
        let dir = tempfile::tempdir().expect("temp dir for certificates");
        std::fs::write(dir.path().join("ca.pem"), issuer.pem()).expect("write ca.pem");
        Self { issuer, dir }
    }

    /// The CA certificate (PEM file).
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The directory the files are written in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A server certificate for `names` (host names or IP addresses), written as
    /// `<file>.pem` and `<file>.key`; the same file names again overwrite (a rotation).
    pub fn server_cert(&self, file: &str, names: &[&str]) -> CertFiles {
        self.issue(file, names, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate with common name `name`.
    pub fn client_cert(&self, file: &str, name: &str) -> CertFiles {
        self.issue(file, &[name], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, file: &str, names: &[&str], usage: ExtendedKeyUsagePurpose) -> CertFiles {
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("certificate params");
        if let Some(first) = names.first() {
            params.distinguished_name.push(DnType::CommonName, first);
        }
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("certificate key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("sign certificate");
        let files = CertFiles {
            cert: self.dir.path().join(format!("{file}.pem")),
            key: self.dir.path().join(format!("{file}.key")),
        };
        // The key first: a reader polling the certificate's change sees a matching pair.
        write_atomically(&files.key, key.serialize_pem().as_bytes());
        write_atomically(&files.cert, cert.pem().as_bytes());
        files
    }
}

/// The certificate's DER bytes as the first PEM block of `path` holds them, to compare with
/// what a server presents.
pub fn first_cert_der(path: &Path) -> Vec<u8> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_file(path)
        .expect("read PEM certificate")
        .to_vec()
}

/// Writes through a temporary file and a rename, as deploy tools swap certificates.
fn write_atomically(path: &Path, bytes: &[u8]) {
    let temp = path.with_extension("tmp");
    std::fs::write(&temp, bytes).expect("write certificate file");
    std::fs::rename(&temp, path).expect("move certificate file in place");
}
