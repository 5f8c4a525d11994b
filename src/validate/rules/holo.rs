//! Rules of the `.holo` compiled-model archive (the hologram-archive crate's archive
//! format, whose layout docs/holo.md gives; "archive-format" below names that
//! description), with the readings in docs/interpretations.md § .holo.

crate::declare_rules! {
    HOLO_SIZE: "HOLO-HDR-001", Spec,
        "the archive holds at least the 10-byte header and the 32-byte footer",
        "archive-format § Binary layout";
    HOLO_MAGIC: "HOLO-HDR-002", Spec,
        "the archive starts with the magic HOLO",
        "archive-format § Binary layout";
    HOLO_VERSION: "HOLO-HDR-003", Spec,
        "format_version is 2 or 3",
        "archive-format § Binary layout; docs/interpretations.md § .holo";
    HOLO_FOOTER: "HOLO-FTR-001", Spec,
        "the 32-byte footer is the BLAKE3 hash of every preceding byte",
        "archive-format § Binary layout";
    HOLO_TABLE_SIZE: "HOLO-TBL-001", Spec,
        "the section table (24 x section_count bytes) fits between the header and the footer",
        "archive-format § Binary layout";
    HOLO_TABLE_PADDING: "HOLO-TBL-002", Hardening,
        "the 7 padding bytes of a section-table entry are zero",
        "docs/interpretations.md § .holo";
    HOLO_KIND: "HOLO-TBL-003", Spec,
        "a section kind is a defined kind (1-16)",
        "archive-format § Sections";
    HOLO_KIND_VERSION: "HOLO-TBL-004", Spec,
        "kinds 15 (AppManifest) and 16 (ContentBlob) appear only in a version-3 archive",
        "archive-format § Sections (15 and 16 are version 3's); docs/interpretations.md § .holo";
    HOLO_SECTION_BOUNDS: "HOLO-TBL-005", Spec,
        "a section lies inside the payload region (after the table, before the footer)",
        "archive-format § Binary layout";
    HOLO_SECTION_OVERLAP: "HOLO-TBL-006", Spec,
        "sections do not overlap",
        "archive-format § Binary layout";
    HOLO_SECTION_REPEAT: "HOLO-TBL-007", Spec,
        "at most one section of each kind other than Extension and ContentBlob",
        "archive-format § Sections";
    HOLO_SECTION_TRAILING: "HOLO-SEC-001", Hardening,
        "a decoded section's payload is consumed exactly (no trailing bytes)",
        "docs/interpretations.md § .holo";
    HOLO_PORT_DECODE: "HOLO-PRT-001", Spec,
        "an Inputs/Outputs port list decodes within its section",
        "archive-format § Sections (PortDescriptor)";
    HOLO_PORT_NAME: "HOLO-PRT-002", Spec,
        "a port name is valid UTF-8",
        "archive-format § Sections (PortDescriptor)";
    HOLO_PORT_COUNT: "HOLO-PRT-003", Hardening,
        "a port's element_count equals the product of its shape when the shape is non-empty",
        "archive-format § Sections (PortDescriptor); docs/interpretations.md § .holo";
    HOLO_EXT_DECODE: "HOLO-EXT-001", Spec,
        "an Extension section holds its key_length and key",
        "archive-format § Sections (Extension)";
    HOLO_EXT_KEY_UTF8: "HOLO-EXT-002", Spec,
        "an Extension key is valid UTF-8",
        "archive-format § Sections (Extension)";
    HOLO_EXT_KEY_UNIQUE: "HOLO-EXT-003", Spec,
        "Extension keys are unique (one section per key)",
        "archive-format § Sections (Extension)";
    HOLO_WEIGHT_DECODE: "HOLO-WGT-001", Spec,
        "the Weights entries decode within the section",
        "archive-format § Sections (Weights)";
    HOLO_WEIGHT_HASH: "HOLO-WGT-002", Spec,
        "every weight body's BLAKE3 hash equals its fingerprint",
        "archive-format § Sections (Weights)";
    HOLO_WEIGHT_UNIQUE: "HOLO-WGT-003", Hardening,
        "a weight fingerprint appears once (bodies are deduplicated)",
        "docs/interpretations.md § .holo";
    HOLO_CONST_DECODE: "HOLO-CST-001", Spec,
        "the Constants entries decode within the section",
        "archive-format § Sections (Constants)";
    HOLO_CONST_TAG: "HOLO-CST-002", Spec,
        "a constant's tag is 0 (inline) or 1 (reference)",
        "archive-format § Sections (Constants)";
    HOLO_CONST_REFERENCE: "HOLO-CST-003", Spec,
        "a constant reference names a fingerprint present in Weights",
        "archive-format § Sections (Constants)";
    HOLO_SCHEDULE_DECODE: "HOLO-SCH-001", Spec,
        "the Schedule levels decode within the section",
        "archive-format § Sections (Schedule)";
    HOLO_EXEC_PLAN_DECODE: "HOLO-EXP-001", Spec,
        "the ExecPlan levels decode within the section",
        "archive-format § Sections (ExecPlan)";
    HOLO_SHAPES_DECODE: "HOLO-SHP-001", Spec,
        "the ShapeRegistry entries decode within the section",
        "archive-format § Sections (ShapeRegistry)";
}
