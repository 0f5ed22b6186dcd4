//! Property tests: a signed context verifies only as minted, by a trusted key, in time.

use codectx_proto::common::v1 as pb;
use codectx_tenant::{
    CLOCK_SKEW_SECONDS, Claims, Minter, Scope, SessionRequest, SigningKey, Verifier, VerifyError,
};
use proptest::prelude::*;
use prost::Message;

const NOW: i64 = 1_800_000_000;

fn claims(tenant: &str) -> Claims {
    Claims {
        tenant_id: tenant.to_owned(),
        subject_id: "sub_0123456789abcdef0123456789abcdef".to_owned(),
        repository_id: "repo_0123456789abcdef0123456789abcdef".to_owned(),
        graph_id: "gph_0123456789abcdef0123456789abcdef".to_owned(),
        scopes: vec![Scope::ReadCode, Scope::ReadMemory],
        policy_revision: 7,
    }
}

fn setup() -> (Minter, Verifier) {
    let key = SigningKey::from_seed("k1", [7u8; 32]);
    let verifier = Verifier::new([key.verification_key()]).unwrap();
    (Minter::new(key), verifier)
}

#[test]
fn minted_context_verifies_with_every_field() {
    let (minter, verifier) = setup();
    let minted = minter.mint_at(&claims("org_a"), NOW).unwrap();
    let verified = verifier.verify_at(minted.signed_bytes(), NOW + 1).unwrap();
    assert_eq!(verified, minted);
    assert_eq!(verified.tenant_id(), "org_a");
    assert_eq!(
        verified.namespace(),
        "org_a|gph_0123456789abcdef0123456789abcdef"
    );
    assert_eq!(verified.expires_at(), NOW + 60);
    assert_eq!(verified.key_id(), "k1");
    assert!(verified.has_scope(Scope::ReadCode));
    assert!(verified.require_scope(Scope::WriteMemory).is_err());
}

#[test]
fn unknown_key_id_is_rejected() {
    let (_, verifier) = setup();
    let other = Minter::new(SigningKey::from_seed("k2", [7u8; 32]));
    let minted = other.mint_at(&claims("org_a"), NOW).unwrap();
    assert_eq!(
        verifier.verify_at(minted.signed_bytes(), NOW),
        Err(VerifyError::UnknownKey("k2".into()))
    );
}

#[test]
fn rotation_keeps_old_contexts_until_distrusted() {
    let (old_minter, verifier) = setup();
    let new_key = SigningKey::from_seed("k2", [9u8; 32]);
    verifier.trust(&new_key.verification_key()).unwrap();
    let new_minter = Minter::new(new_key);
    let old = old_minter.mint_at(&claims("org_a"), NOW).unwrap();
    let new = new_minter.mint_at(&claims("org_a"), NOW).unwrap();
    assert!(verifier.verify_at(old.signed_bytes(), NOW).is_ok());
    assert!(verifier.verify_at(new.signed_bytes(), NOW).is_ok());
    verifier.distrust("k1");
    assert_eq!(
        verifier.verify_at(old.signed_bytes(), NOW),
        Err(VerifyError::UnknownKey("k1".into()))
    );
    assert!(verifier.verify_at(new.signed_bytes(), NOW).is_ok());
}

#[test]
fn a_remembered_context_still_expires_and_still_needs_its_key() {
    let (minter, verifier) = setup();
    let minted = minter.mint_at(&claims("org_a"), NOW).unwrap();
    // The first verification checks the signature; the second comes from the cache.
    assert!(verifier.verify_at(minted.signed_bytes(), NOW).is_ok());
    assert_eq!(
        verifier.verify_at(minted.signed_bytes(), NOW + 1).unwrap(),
        minted
    );
    // The time window is checked on every use.
    assert!(matches!(
        verifier.verify_at(minted.signed_bytes(), NOW + 60 + CLOCK_SKEW_SECONDS + 1),
        Err(VerifyError::Expired { .. })
    ));
    // The key id now names another key: the signature is checked again and fails.
    let impostor = SigningKey::from_seed("k1", [8u8; 32]);
    verifier.trust(&impostor.verification_key()).unwrap();
    assert_eq!(
        verifier.verify_at(minted.signed_bytes(), NOW + 1),
        Err(VerifyError::BadSignature)
    );
}

#[test]
fn empty_input_is_missing() {
    let (_, verifier) = setup();
    assert_eq!(verifier.verify_at(&[], NOW), Err(VerifyError::Missing));
}

#[test]
fn session_context_only_narrows() {
    let (minter, verifier) = setup();
    let parent = minter.mint_at(&claims("org_a"), NOW).unwrap();
    let session = minter
        .derive_session_at(
            &parent,
            &SessionRequest {
                session_id: Some("mcp-session-1".into()),
                scopes: Some(vec![Scope::ReadCode]),
                ttl_seconds: Some(30),
            },
            NOW,
        )
        .unwrap();
    let session = verifier.verify_at(session.signed_bytes(), NOW).unwrap();
    assert_eq!(session.session_id(), Some("mcp-session-1"));
    assert_eq!(session.parent_context_id(), Some(parent.context_id()));
    assert_eq!(session.scopes(), &[Scope::ReadCode]);
    assert_eq!(session.expires_at(), NOW + 30);
    assert_eq!(session.tenant_id(), parent.tenant_id());

    // Widening scopes is refused.
    let widened = minter.derive_session_at(
        &session,
        &SessionRequest {
            scopes: Some(vec![Scope::ReadMemory]),
            ..Default::default()
        },
        NOW,
    );
    assert!(widened.is_err());
    // Changing the session id is refused; keeping it is fine.
    let renamed = minter.derive_session_at(
        &session,
        &SessionRequest {
            session_id: Some("other".into()),
            ..Default::default()
        },
        NOW,
    );
    assert!(renamed.is_err());
    let child = minter
        .derive_session_at(&session, &SessionRequest::default(), NOW)
        .unwrap();
    assert_eq!(child.session_id(), Some("mcp-session-1"));
    // A longer ttl never outlives the parent.
    let longer = minter
        .derive_session_at(
            &parent,
            &SessionRequest {
                ttl_seconds: Some(3600),
                ..Default::default()
            },
            NOW,
        )
        .unwrap();
    assert_eq!(longer.expires_at(), parent.expires_at());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_flipped_byte_is_rejected(position in any::<prop::sample::Index>(), mask in 1u8..=255) {
        let (minter, verifier) = setup();
        let minted = minter.mint_at(&claims("org_a"), NOW).unwrap();
        let mut bytes = minted.signed_bytes().to_vec();
        let index = position.index(bytes.len());
        bytes[index] ^= mask;
        prop_assert!(verifier.verify_at(&bytes, NOW).is_err());
    }

    #[test]
    fn a_different_key_under_the_same_id_is_rejected(seed in any::<[u8; 32]>()) {
        prop_assume!(seed != [7u8; 32]);
        let (_, verifier) = setup();
        let forger = Minter::new(SigningKey::from_seed("k1", seed));
        let forged = forger.mint_at(&claims("org_a"), NOW).unwrap();
        prop_assert_eq!(verifier.verify_at(forged.signed_bytes(), NOW), Err(VerifyError::BadSignature));
    }

    #[test]
    fn an_expired_context_is_rejected(late in 1i64..1_000_000) {
        let (minter, verifier) = setup();
        let minted = minter.mint_at(&claims("org_a"), NOW).unwrap();
        let now = minted.expires_at() + CLOCK_SKEW_SECONDS + late;
        let rejected = matches!(verifier.verify_at(minted.signed_bytes(), now), Err(VerifyError::Expired { .. }));
        prop_assert!(rejected);
    }

    #[test]
    fn a_context_rewritten_for_another_tenant_is_rejected(other in "[a-z0-9_]{1,40}") {
        prop_assume!(other != "org_a");
        let (minter, verifier) = setup();
        let minted = minter.mint_at(&claims("org_a"), NOW).unwrap();
        let mut envelope = pb::SignedTenantContext::decode(minted.signed_bytes().as_ref()).unwrap();
        let mut context = pb::TenantContext::decode(envelope.context.as_slice()).unwrap();
        context.namespace = format!("{other}|{}", context.graph_id);
        context.tenant_id = other;
        envelope.context = context.encode_to_vec();
        let rewritten = envelope.encode_to_vec();
        prop_assert_eq!(verifier.verify_at(&rewritten, NOW), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_context_signed_for_another_tenant_verifies_as_that_tenant_only(other in "org_[a-z]{1,8}") {
        // A context is bound to the tenant it was minted for: verifying never yields
        // another tenant's scope, whichever tenant the caller hoped for.
        let (minter, verifier) = setup();
        let minted = minter.mint_at(&claims(&other), NOW).unwrap();
        let verified = verifier.verify_at(minted.signed_bytes(), NOW).unwrap();
        prop_assert_eq!(verified.tenant_id(), other.as_str());
        let prefix = format!("{}|", other);
        prop_assert!(verified.namespace().starts_with(&prefix));
    }
}

/// The key ring is written owner-only whatever mode a previous file had, and never
/// through a symlink planted where the file goes.
#[cfg(unix)]
#[test]
fn key_files_are_private_and_never_written_through_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signing-keys");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    SigningKey::write_ring(&path, &[SigningKey::generate("authz")]).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // A symlink at the target is replaced, and what it pointed at is untouched.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "do not touch").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    SigningKey::write_ring(&path, &[SigningKey::generate("authz")]).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "do not touch");
    assert!(
        !std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(SigningKey::read_ring(&path).unwrap().len(), 1);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

/// A valid envelope with bytes appended (an unknown field) is a different byte string that
/// would verify and take a cache slot; it is refused, so the cache cannot be flushed.
#[test]
fn non_canonical_envelopes_are_refused() {
    let (minter, verifier) = setup();
    let context = minter.mint_at(&claims("org_a"), NOW).unwrap();
    let signed = context.signed_bytes().to_vec();
    assert!(verifier.verify_at(&signed, NOW).is_ok());
    for extra in [vec![0x78, 0x01], vec![0xa2, 0x06, 0x00]] {
        let mut padded = signed.clone();
        padded.extend_from_slice(&extra);
        assert!(
            matches!(
                verifier.verify_at(&padded, NOW),
                Err(VerifyError::Malformed(_))
            ),
            "{extra:?}"
        );
    }
}
