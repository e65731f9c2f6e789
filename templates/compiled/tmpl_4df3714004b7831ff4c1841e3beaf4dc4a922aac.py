from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'channel/README.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('_shared/readme.md.j2', 'channel/README.md.j2')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    yield from parent_template.root_render_func(context)

def block_about(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_model_prose = resolve('model_prose')
    l_0_channel_names = resolve('channel_names')
    l_0_session_key = resolve('session_key')
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_2 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_3 = environment.filters['md_code']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'md_code' found.")
    pass
    yield 'A chat-channel bot (target `channel`) running the model '
    yield str((undefined(name='model_prose') if l_0_model_prose is missing else l_0_model_prose))
    yield '.\nChannels: '
    yield str((t_1(context.eval_ctx, t_2(context, (undefined(name='channel_names') if l_0_channel_names is missing else l_0_channel_names), 'md_code'), ', ') if (undefined(name='channel_names') if l_0_channel_names is missing else l_0_channel_names) else 'none'))
    yield '.\nEach conversation, keyed by '
    yield str(t_3((undefined(name='session_key') if l_0_session_key is missing else l_0_session_key)))
    yield ', is its own session.\n'

def block_run(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_slack = resolve('slack')
    l_0_slack_events = resolve('slack_events')
    l_0_slack_scopes = resolve('slack_scopes')
    l_0_webhook = resolve('webhook')
    try:
        t_3 = environment.filters['md_code']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'md_code' found.")
    pass
    yield '```sh\n# serve over HTTP (needs the serve extra: pip install "specwire[serve]")\npython agent.py serve --host 0.0.0.0 --port 8000\n# or on the local console: one "<conversation-key>: <message>" per line\npython agent.py console\npython agent.py console --message "thread-1: hello"\n```\n\n`serve` answers:\n'
    if (undefined(name='slack') if l_0_slack is missing else l_0_slack):
        pass
        yield "- `POST /slack/events`: point the Slack app's Event Subscriptions\n  ("
        l_1_loop = missing
        for l_1_event, l_1_loop in LoopContext((undefined(name='slack_events') if l_0_slack_events is missing else l_0_slack_events), undefined):
            _loop_vars = {}
            pass
            yield str(t_3(l_1_event))
            yield str((', ' if (not environment.getattr(l_1_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 19 in 'channel/README.md.j2' evaluated to false and no else section was defined.")))
        l_1_loop = l_1_event = missing
        yield ';\n  bot scopes '
        l_1_loop = missing
        for l_1_scope, l_1_loop in LoopContext((undefined(name='slack_scopes') if l_0_slack_scopes is missing else l_0_slack_scopes), undefined):
            _loop_vars = {}
            pass
            yield str(t_3(l_1_scope))
            yield str((', ' if (not environment.getattr(l_1_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 20 in 'channel/README.md.j2' evaluated to false and no else section was defined.")))
        l_1_loop = l_1_scope = missing
        yield ")\n  here, through a TLS-terminating proxy. Requests are checked against the signing secret and\n  refused when older than 5 minutes; each message is acknowledged at once and answered in its\n  thread; Slack's retries are answered once.\n"
    if (undefined(name='webhook') if l_0_webhook is missing else l_0_webhook):
        pass
        yield '- `POST /v1/turns` with `Authorization: Bearer <webhook token>` and\n  `{"conversation": "...", "user": "...", "text": "..."}` (`user` optional): returns\n  `{"reply": "...", "session_id": "..."}`.\n'
    if ((not (undefined(name='slack') if l_0_slack is missing else l_0_slack)) and (not (undefined(name='webhook') if l_0_webhook is missing else l_0_webhook))):
        pass
        yield '- nothing yet: add `channels.slack {botToken, signingSecret}` or `channels.webhook {token}` to\n  the spec (as `$SECRET` references) and rebuild.\n'
    yield '- `GET /healthz`.\n'

def block_wiring(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_has_memory = resolve('has_memory')
    l_0_scope_note = resolve('scope_note')
    pass
    yield "Wired on every turn by a single `wire_memory` call with the conversation's session id: focus,\nplans and handoff follow the conversation when `continuity.scope` is `session`.\n"
    if ((undefined(name='has_memory') if l_0_has_memory is missing else l_0_has_memory) and (undefined(name='scope_note') if l_0_scope_note is missing else l_0_scope_note)):
        pass
        yield str((undefined(name='scope_note') if l_0_scope_note is missing else l_0_scope_note))
        yield '\n'
    elif (undefined(name='has_memory') if l_0_has_memory is missing else l_0_has_memory):
        pass
        yield 'Facts belong to the bot, shared by every conversation (a fact told in a DM can be recalled in a\nchannel).\n'
    yield 'State lives under `.specwire/` in the working directory.\n'

blocks = {'about': block_about, 'run': block_run, 'wiring': block_wiring}
debug_info = '1=12&2=17&3=47&4=49&5=51&7=54&17=73&19=77&20=85&25=92&30=95&36=100&39=111&40=113&41=115'