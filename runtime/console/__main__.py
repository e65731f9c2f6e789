from specwire.runtime.console.command import cli

cli()
