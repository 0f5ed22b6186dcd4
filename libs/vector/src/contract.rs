//! The vector contract: every backend runs these same assertions (the embedded store in
//! this crate's tests, Milvus in its adapter's tests).

use crate::{CollectionKey, VectorScope, VectorStore, isolate, prepare};

fn unit(values: &[f32], key: &CollectionKey) -> Vec<f32> {
    let mut vector = vec![0.0; key.dimension as usize];
    vector[..values.len()].copy_from_slice(values);
    prepare(&vector, key).unwrap()
}

/// Runs the contract on `store` in fresh scopes (ids in the formats authz mints, so
/// literal-filter backends accept them; repeated runs on a shared server never meet).
pub async fn run(store: &dyn VectorStore) {
    use codectx_core::ids::{mint, prefix};
    let graph = mint(prefix::GRAPH);
    let (tenant_a, tenant_b) = (mint(prefix::ORGANISATION), mint(prefix::ORGANISATION));
    let a = VectorScope {
        namespace: format!("{tenant_a}|{graph}"),
        tenant_id: tenant_a.clone(),
    };
    let b = VectorScope {
        namespace: format!("{tenant_b}|{graph}"),
        tenant_id: tenant_b,
    };
    let same_tenant_other_namespace = VectorScope {
        tenant_id: tenant_a.clone(),
        namespace: format!("{tenant_a}|{}", mint(prefix::GRAPH)),
    };
    // Entity ids, minted too.
    let (e1, e2, e3, x) = (mint("ent"), mint("ent"), mint("ent"), mint("ent"));
    let model = CollectionKey {
        model_hash: "0123456789abcdef0123456789abcdef".into(),
        dimension: 8,
    };
    let other_model = CollectionKey {
        model_hash: "fedcba9876543210fedcba9876543210".into(),
        dimension: 8,
    };

    let records = vec![
        (e1.clone(), unit(&[1.0, 0.0, 0.0], &model)),
        (e2.clone(), unit(&[0.8, 0.6, 0.0], &model)),
        (e3.clone(), unit(&[0.0, 0.0, 1.0], &model)),
    ];
    assert_eq!(store.upsert(&a, &model, &records).await.unwrap(), 3);
    // The same ids in tenant B point the other way.
    let reversed = vec![
        (e1.clone(), unit(&[0.0, 0.0, 1.0], &model)),
        (e2.clone(), unit(&[0.0, 1.0, 0.0], &model)),
        (e3.clone(), unit(&[1.0, 0.0, 0.0], &model)),
    ];
    store.upsert(&b, &model, &reversed).await.unwrap();
    store
        .upsert(
            &same_tenant_other_namespace,
            &model,
            &[(x.clone(), unit(&[1.0, 0.0, 0.0], &model))],
        )
        .await
        .unwrap();

    // Nearest, best first, limited, scoped.
    let query = unit(&[1.0, 0.0, 0.0], &model);
    let hits = store.nearest(&a, &model, &query, 10).await.unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.entity_id.as_str())
            .collect::<Vec<_>>(),
        vec![e1.as_str(), e2.as_str(), e3.as_str()]
    );
    assert!((hits[0].score - 1.0).abs() < 1e-3, "{hits:?}");
    assert!((hits[1].score - 0.8).abs() < 1e-3, "{hits:?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(
        hits.iter()
            .all(|h| h.tenant_id == a.tenant_id && h.namespace == a.namespace)
    );
    assert_eq!(store.nearest(&a, &model, &query, 1).await.unwrap().len(), 1);
    // Tenant B: identical ids, its own vectors only.
    let hits = store.nearest(&b, &model, &query, 10).await.unwrap();
    assert_eq!(hits[0].entity_id, e3);
    assert!(hits.iter().all(|h| h.tenant_id == b.tenant_id));
    // Another namespace of the same tenant is another scope.
    let hits = store
        .nearest(&same_tenant_other_namespace, &model, &query, 10)
        .await
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.entity_id.as_str())
            .collect::<Vec<_>>(),
        vec![x.as_str()]
    );
    // Another model's collection is empty.
    assert!(
        store
            .nearest(&a, &other_model, &query, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        isolate(&a, store.nearest(&a, &model, &query, 10).await.unwrap()).len(),
        3
    );

    // Listing: the scope's ids for the model, by prefix; another scope's never.
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    let mut expected = vec![e1.clone(), e2.clone(), e3.clone()];
    expected.sort();
    assert_eq!(sorted(store.ids(&a, &model, "").await.unwrap()), expected);
    assert_eq!(
        store.ids(&a, &model, &e2[..12]).await.unwrap(),
        vec![e2.clone()]
    );
    assert!(store.ids(&a, &model, "ent_").await.unwrap().len() == 3);
    assert!(store.ids(&a, &model, "cv_").await.unwrap().is_empty());
    assert!(store.ids(&a, &other_model, "").await.unwrap().is_empty());
    assert_eq!(
        store
            .ids(&same_tenant_other_namespace, &model, "")
            .await
            .unwrap(),
        vec![x.clone()]
    );
    for hostile in ["ent_\" or 1 == 1", "%", "ENT_", "e_1"] {
        assert!(store.ids(&a, &model, hostile).await.is_err(), "{hostile}");
    }

    // Upsert replaces by id.
    store
        .upsert(&a, &model, &[(e3.clone(), unit(&[1.0, 0.1, 0.0], &model))])
        .await
        .unwrap();
    let hits = store.nearest(&a, &model, &query, 10).await.unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[1].entity_id, e3);

    // Delete removes the id from every model's collection, in this scope only.
    store
        .upsert(
            &a,
            &other_model,
            &[(e1.clone(), unit(&[1.0, 0.0, 0.0], &other_model))],
        )
        .await
        .unwrap();
    // Counts are informational (milvus-lite reports 0); what is gone is checked below.
    store.delete(&a, std::slice::from_ref(&e1)).await.unwrap();
    assert!(
        store
            .nearest(&a, &model, &query, 10)
            .await
            .unwrap()
            .iter()
            .all(|h| h.entity_id != e1)
    );
    assert!(
        store
            .nearest(&a, &other_model, &query, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .nearest(&b, &model, &query, 10)
            .await
            .unwrap()
            .iter()
            .any(|h| h.entity_id == e1)
    );

    assert!(!store.ids(&a, &model, "").await.unwrap().contains(&e1));

    // Clean up.
    for scope in [&a, &b, &same_tenant_other_namespace] {
        store
            .delete(scope, &[e1.clone(), e2.clone(), e3.clone(), x.clone()])
            .await
            .unwrap();
        assert!(
            store
                .nearest(scope, &model, &query, 10)
                .await
                .unwrap()
                .is_empty()
        );
    }
}
