//! Tenants of a workload (extension of WORKLOAD.md: an optional `tenant` on setup calls
//! and questions). Each named tenant is an organisation of its own, with a member
//! subject, an API key, and every workload repository indexed under its own entry of
//! the same name, so its memory namespace and its code are its own. Calls without a
//! tenant run as the development subject (`dev`). Made in the benchmark's authz store
//! before the stacks start; the keys live for this run only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codectx_authz::store::{Grantee, Role};
use codectx_tenant::Scope;

use crate::indexing::{self, IndexArgs};

use super::workload::Workload;

/// The development tenant: the subject `codectx up` creates.
pub const DEV: &str = "dev";

/// API keys by tenant name (not `dev`, whose key the stack has).
#[derive(Debug, Default, Clone)]
pub struct Tenants {
    keys: BTreeMap<String, String>,
}

impl Tenants {
    /// The key a call of `tenant` (None: dev) runs with.
    pub fn key<'a>(&'a self, tenant: Option<&str>, dev_key: &'a str) -> anyhow::Result<&'a str> {
        match tenant {
            None | Some(DEV) => Ok(dev_key),
            Some(name) => self
                .keys
                .get(name)
                .map(String::as_str)
                .ok_or_else(|| anyhow::anyhow!("tenant {name:?} was not set up")),
        }
    }
}

/// The tenant names a workload uses, besides dev.
pub fn named(workload: &Workload) -> Vec<String> {
    let mut names: Vec<String> = workload
        .setup
        .iter()
        .filter_map(|call| call.tenant.clone())
        .chain(workload.questions.iter().filter_map(|q| q.tenant.clone()))
        .filter(|name| name != DEV)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Creates (or finds) each tenant's organisation, indexes the workload's repositories
/// under it, and gives it a member subject with a new API key and every scope.
/// The repositories are indexed into `graph`, the store the measured stack reads.
pub async fn prepare(
    workload: &Workload,
    repos: &BTreeMap<String, PathBuf>,
    data: &Path,
    graph: &crate::indexing::GraphArgs,
) -> anyhow::Result<Tenants> {
    let names = named(workload);
    let mut tenants = Tenants::default();
    if names.is_empty() {
        return Ok(tenants);
    }
    std::fs::create_dir_all(data.join("authz"))?;
    let store = codectx_authz::Store::open(&data.join("authz").join("access.db"))?;
    for name in names {
        let organisation = match store.organisation_by_name(&name)? {
            Some(found) => found,
            None => store.create_organisation(&name)?,
        };
        for repo in &workload.repos {
            let index_args = IndexArgs {
                quiet: true,
                org: Some(name.clone()),
                graph: graph.clone(),
                ..IndexArgs::embedded(
                    repos[&repo.key].clone(),
                    repo.key.clone(),
                    data.to_path_buf(),
                )
            };
            let graph = indexing::open_store(&index_args).await?;
            indexing::run(&index_args, &*graph).await?;
        }
        let subject = match store.subject_by_name(&organisation.id, "bench-agent")? {
            Some(found) => found,
            None => store.create_subject(&organisation.id, "bench-agent", Role::Member)?,
        };
        for repo in &workload.repos {
            let entry = store
                .repository_by_name(&organisation.id, &repo.key)?
                .ok_or_else(|| anyhow::anyhow!("{name}: {} was not registered", repo.key))?;
            let grantee = Grantee::Subject(subject.id.clone());
            let granted = store
                .list_grants(&entry.id)?
                .iter()
                .any(|grant| grant.grantee == grantee);
            if !granted {
                store.create_grant(&entry.id, &grantee, &Scope::ALL)?;
            }
        }
        let (_, secret) = store.create_api_key(&subject.id, "bench")?;
        tenants.keys.insert(name, secret);
    }
    Ok(tenants)
}
