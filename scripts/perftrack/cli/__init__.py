"""The `perftrack` command line: one verb per stage of the flow, one module per verb group.

Every verb is registered here, in the order `perftrack --help` lists them; each module is
a thin layer over its stage (servers, run/plan, db, analysis, publish, study, site, pr,
runner host).
"""

from __future__ import annotations

from perftrack.cli import (
    advise,
    alerts,
    analysis,
    db,
    demo,
    explain,
    host,
    pr,
    publish,
    run,
    servers,
    site,
    study,
)
from perftrack.cli.app import app, version
from perftrack.cli.main import _entry, main

app.add_typer(servers.servers_app, name="servers")
app.add_typer(db.db_app, name="db")
app.add_typer(site.site_app, name="site")
app.add_typer(host.runner_app, name="runner")
app.add_typer(pr.tags_app, name="tags")
app.add_typer(pr.pr_app, name="pr")
app.add_typer(publish.cache_app, name="cache")
app.add_typer(publish.archive_app, name="archive")
app.command()(run.run)
app.command("plan")(run.plan_cmd)
app.command()(db.ingest)
app.command()(analysis.detect)
app.command("alerts")(alerts.alerts_cmd)
app.command("publish")(publish.publish_cmd)
app.command("compare")(analysis.compare_cmd)
app.command("bisect")(analysis.bisect_cmd)
app.command("advise")(advise.advise_cmd)
app.command("explain")(explain.explain_cmd)
app.command()(run.parse)
app.command()(demo.demo)
app.command()(version)
app.add_typer(study.study_app, name="study")

__all__ = ["_entry", "app", "main"]
