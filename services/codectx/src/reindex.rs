//! `codectx reindex`: re-index a repository now, in a cluster installed with the chart's
//! indexer. Creates a Job from the repository's indexer CronJob (what
//! `kubectl create job --from=cronjob/NAME` does), owned by the CronJob so its history
//! limits and cascading deletion apply, and prints the Job's name.

use std::path::PathBuf;

use codectx_errors::Error;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, PostParams};

/// Arguments of `codectx reindex`.
#[derive(Debug, clap::Args)]
pub struct ReindexArgs {
    /// The repository's indexer CronJob (the chart names it `<release>-index-<repository>`;
    /// `kubectl get cronjobs -l app.kubernetes.io/component=indexer` lists them).
    #[arg(long)]
    pub cronjob: String,
    /// Namespace of the CronJob; default: the kubeconfig context's (or this pod's).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Kubeconfig file; default: `KUBECONFIG`, `~/.kube/config`, or the pod's account.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Creates the Job and returns its name.
pub async fn run(args: &ReindexArgs) -> Result<String, Error> {
    let kube_error = |e: kube::Error| Error::unavailable(format!("Kubernetes API: {e}"));
    let client = match &args.kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                Error::invalid_argument("kubeconfig", format!("{}: {e}", path.display()))
            })?;
            let config = kube::Config::from_custom_kubeconfig(file, &Default::default())
                .await
                .map_err(|e| {
                    Error::invalid_argument("kubeconfig", format!("{}: {e}", path.display()))
                })?;
            kube::Client::try_from(config).map_err(kube_error)?
        }
        None => kube::Client::try_default().await.map_err(kube_error)?,
    };
    let namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    let cronjob = match cronjobs.get_opt(&args.cronjob).await.map_err(kube_error)? {
        Some(cronjob) => cronjob,
        None => {
            return Err(Error::not_found(format!(
                "no CronJob {} in namespace {namespace}: list the indexers with \
                 `kubectl get cronjobs -n {namespace} -l app.kubernetes.io/component=indexer`",
                args.cronjob
            )));
        }
    };
    let template = cronjob
        .spec
        .as_ref()
        .map(|spec| spec.job_template.clone())
        .ok_or_else(|| Error::internal(format!("CronJob {} has no spec", args.cronjob)))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    // Job names are at most 63 characters; the suffix keeps manual runs apart.
    let prefix: String = args.cronjob.chars().take(40).collect();
    let name = format!("{}-manual-{stamp}", prefix.trim_end_matches('-'));
    let template_meta = template.metadata.unwrap_or_default();
    let mut annotations = template_meta.annotations.unwrap_or_default();
    annotations.insert(
        "cronjob.kubernetes.io/instantiate".to_owned(),
        "manual".to_owned(),
    );
    let job = Job {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(namespace.clone()),
            labels: template_meta.labels,
            annotations: Some(annotations),
            owner_references: Some(vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "CronJob".into(),
                name: args.cronjob.clone(),
                uid: cronjob.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..Default::default()
        },
        spec: template.spec,
        status: None,
    };
    let jobs: Api<Job> = Api::namespaced(client, &namespace);
    jobs.create(&PostParams::default(), &job)
        .await
        .map_err(kube_error)?;
    Ok(name)
}
