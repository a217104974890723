//! What serving one version of a custom resource needs of its CustomResourceDefinition
//! ([`CustomVersion`]: names, schemas, subresources, printer columns), as
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go`'s
//! `crdInfo` holds it per version; built by [`definition`](super::definition).

use super::schema::Schema;

/// The `scale` subresource's paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath` (`.spec.replicas`).
    pub spec_replicas: String,
    /// `statusReplicasPath` (`.status.replicas`).
    pub status_replicas: String,
    /// `labelSelectorPath` (`.status.selector`), if any.
    pub label_selector: Option<String>,
}

/// One `additionalPrinterColumns` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Header.
    pub name: String,
    /// `string`, `integer`, `number`, `boolean`, `date`.
    pub type_: String,
    /// Format hint.
    pub format: String,
    /// Description.
    pub description: String,
    /// 0 for the narrow output, more for `-o wide`.
    pub priority: i64,
    /// A simple JSONPath (`.spec.replicas`).
    pub json_path: String,
}

/// The serving definition of one version of a custom resource.
pub struct CustomVersion {
    /// The CRD's name (`widgets.example.com`).
    pub crd_name: String,
    /// The version objects are stored in (strategy None: only `apiVersion` differs).
    pub storage_version: String,
    /// `listKind`.
    pub list_kind: String,
    /// This version's structural schema (`None`: none, everything is pruned).
    pub schema: Option<Schema>,
    /// The storage version's schema when that is another version: an object converted to it
    /// is pruned with it, as upstream prunes after every conversion.
    pub storage_schema: Option<Schema>,
    /// Whether the status subresource is enabled.
    pub status: bool,
    /// The scale subresource, if enabled.
    pub scale: Option<ScalePaths>,
    /// Printer columns (the default `Age` when the CRD names none).
    pub columns: Vec<PrinterColumn>,
    /// Whether the CRD is being deleted (creates are refused).
    pub terminating: bool,
    /// The warning a deprecated version sends with every request.
    pub warning: Option<String>,
    /// Discovery's `storageVersionHash`: the first 8 bytes of the SHA-256 of
    /// `<group>/<storage version>/<kind>`, base64.
    pub storage_version_hash: String,
}

impl std::fmt::Debug for CustomVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomVersion")
            .field("crd_name", &self.crd_name)
            .field("storage_version", &self.storage_version)
            .field("status", &self.status)
            .field("scale", &self.scale)
            .finish_non_exhaustive()
    }
}
