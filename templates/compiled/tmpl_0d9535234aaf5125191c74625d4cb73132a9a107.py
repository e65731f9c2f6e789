from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'managed/README.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('_shared/readme.md.j2', 'managed/README.md.j2')
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
    l_0_tenant_ids = resolve('tenant_ids')
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
    pass
    yield 'A multi-tenant service (target `managed`) running the model '
    yield str((undefined(name='model_prose') if l_0_model_prose is missing else l_0_model_prose))
    yield ". Every turn runs\nfenced inside its tenant's own root, and the agent works in that root's `workspace/` folder: its\nfile tools cannot reach the tenant's stores and session logs kept beside it.\nTenants: "
    yield str(t_1(context.eval_ctx, t_2(context, (undefined(name='tenant_ids') if l_0_tenant_ids is missing else l_0_tenant_ids), 'md_code'), ', '))
    yield '.\n'

def block_run_from(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield "from the directory that holds the\ntenants' roots (in its `.specwire/tenants/`, unless `SPECWIRE_TENANTS_ROOT` says otherwise; each\ntenant's agent works in its root's `workspace/` folder):\n"

def block_run(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_first_key_var = resolve('first_key_var')
    l_0_tenant_ids = resolve('tenant_ids')
    l_0_spec_name = resolve('spec_name')
    try:
        t_3 = environment.filters['md_code']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'md_code' found.")
    try:
        t_4 = environment.filters['sh']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'sh' found.")
    try:
        t_5 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    pass
    yield '```sh\n# serve the OpenAI-compatible API (needs the serve extra: pip install "specwire[serve]")\nexport '
    yield str((undefined(name='first_key_var') if l_0_first_key_var is missing else l_0_first_key_var))
    yield '="$(python -c \'import secrets; print(secrets.token_urlsafe(32))\')"\npython agent.py serve --host 0.0.0.0 --port 8000\n# or on the local console: one "<tenant-id>/<session-key>: <message>" per line\npython agent.py console --message '
    yield str(t_4(str_join((environment.getitem((undefined(name='tenant_ids') if l_0_tenant_ids is missing else l_0_tenant_ids), 0), '/session-1: hello', ))))
    yield "\n```\n\nAny OpenAI client then talks to the agent with its tenant's key; the model name is\n"
    yield str(t_3((undefined(name='spec_name') if l_0_spec_name is missing else l_0_spec_name)))
    yield ':\n\n```python\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="<the tenant\'s key>")\nreply = client.chat.completions.create(\n    model='
    yield str(t_5(context.eval_ctx, (undefined(name='spec_name') if l_0_spec_name is missing else l_0_spec_name)))
    yield ',\n    messages=[{"role": "user", "content": "hello"}],\n    extra_headers={"X-Session-Id": "session-1"},\n)\nprint(reply.choices[0].message.content)\n```\n\nThe service keeps each session\'s conversation itself: only the last message (the user\'s) is\nread; earlier messages, a system message and sampling parameters are ignored. The session is\nthe `X-Session-Id` header, else the `user` field, else a new one (returned in `X-Session-Id`).\nA tenant over its token budget gets `429 insufficient_quota`; a wrong key gets `401`.\n'

def block_wiring(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_has_memory = resolve('has_memory')
    l_0_scope_note = resolve('scope_note')
    l_0_continuity_scope = resolve('continuity_scope')
    pass
    yield "Wired on every turn by a single `wire_memory` call, inside the requesting tenant's root (fenced)\nand scoped to the session id. One tenant never sees another tenant's stores.\n"
    if ((undefined(name='has_memory') if l_0_has_memory is missing else l_0_has_memory) and (undefined(name='scope_note') if l_0_scope_note is missing else l_0_scope_note)):
        pass
        yield str((undefined(name='scope_note') if l_0_scope_note is missing else l_0_scope_note))
        yield '\n'
    if ((undefined(name='continuity_scope') if l_0_continuity_scope is missing else l_0_continuity_scope) == 'audience'):
        pass
        yield "Focus, plans, goals and the handoff follow the request's `user` across their sessions; a request\nwithout `user` keeps them in its session (`X-Session-Id`). Set `continuity.scope: spec` for one\nworking memory shared by every user of a tenant.\n"
    elif ((undefined(name='continuity_scope') if l_0_continuity_scope is missing else l_0_continuity_scope) == 'spec'):
        pass
        yield "Focus, plans, goals and the handoff are the tenant's, shared by every user of it\n(`continuity.scope: spec`).\n"
    elif ((undefined(name='continuity_scope') if l_0_continuity_scope is missing else l_0_continuity_scope) == 'session'):
        pass
        yield 'Focus, plans, goals and the handoff belong to the conversation (`continuity.scope: session`).\n'

blocks = {'about': block_about, 'run_from': block_run_from, 'run': block_run, 'wiring': block_wiring}
debug_info = '1=12&2=17&3=40&6=42&8=45&13=55&16=85&19=87&23=89&30=91&42=94&45=106&46=108&48=110&52=113&55=116'