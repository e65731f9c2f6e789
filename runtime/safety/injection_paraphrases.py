"""Scanner rules for injections written in plain English rather than in the canonical phrases.

Each entry is ``(name, category, pattern, needs)``; ``injection`` compiles them (case-insensitive,
dot-all) and gates each on its needed words like its own rules: every group of ``needs`` must
have one of its words in the casefolded text before the regex runs. A need is a whole word (the
pattern only matches it between word boundaries, so ``"sh"`` does not pass on "shipping"),
or, marked ``~``, a substring. Every group must list every word the pattern could match there:
a word left out is a match the gate skips.

The rules look for what makes a note an attack rather than a note *about* instructions:

- **override**: rules addressed to the reader as *yours* (``your guidelines no longer apply``,
  ``stop following your system prompt``), never a customer's own (``ignore my previous
  instructions about delivery`` is a customer talking to the business);
- **authority spoofing**: a fake role header (``SYSTEM:``, ``[ADMIN]``) followed by a directive to
  the assistant, a note addressed to the AI that claims a permission, a grant of permission *to
  the assistant* (``the owner authorised you to``);
- **exfiltration**: a sending verb, something only the agent holds (memory, facts, secrets,
  keys, credentials, the system prompt) and a destination outside (an address, a URL, a webhook,
  "me", the public);
- **command coercion**: a download piped into a shell, reverse shells, commands that destroy a
  disk or a home, and tool calls demanded "without asking", "silently" or "before answering".
"""

from __future__ import annotations

from typing import Final

Needs = tuple[tuple[str, ...], ...]
Paraphrase = tuple[str, str, str, Needs]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Who the injected text talks to. "agent" alone is also a human support agent: it is only
# accepted where the rest of the phrase is an attack in itself.
_AI: Final = (
    r"(?:ai|a\.i\.|assistant|language\s+model|llm|chatbot|bot|gpt|model|"
    r"ai\s+(?:agent|model|assistant|system)s?)"
)
_AI_WORDS: Final = (
    "~a.i.",
    *_words("ai ais assistant assistants model models llm llms bot bots chatbot chatbots gpt gpts"),
)
# What an instruction set is called. Without "your" only these; with "your" also the rest.
_RULESET: Final = (
    r"(?:instructions?|rules|guidelines|directives|directions|programming|system\s+prompt|"
    r"prompts?|constraints|restrictions|guardrails)"
)
_YOUR_RULESET: Final = rf"(?:{_RULESET}|polic(?:y|ies)|filters|training|safety\s+\w+)"
_RULESET_WORDS: Final = _words(
    "instruction instructions rules guidelines directives directions programming prompt prompts "
    "constraints restrictions guardrails policy policies filters training safety"
)
_EARLIER: Final = (
    r"(?:previous|prior|earlier|above|preceding|original|initial|system|developer['’]?s?)"
)
_REVOKED: Final = (
    r"(?:void|revoked|cancell?ed|obsolete|outdated|superseded|overridden|overruled|disabled|"
    r"lifted|suspended|removed|null|invalid|deactivated|rescinded|withdrawn|turned\s+off|"
    r"switched\s+off|no\s+longer\s+(?:apply|applies|valid|in\s+effect|matters?|binding|relevant)|"
    r"(?:do|does)\s+not\s+apply|(?:don|doesn)['’]t\s+apply|(?:are|is)\s+not\s+(?:valid|binding))\b"
)
_REVOKED_WORDS: Final = _words(
    "void revoked cancelled canceled obsolete outdated superseded overridden overruled disabled "
    "lifted suspended removed null invalid deactivated rescinded withdrawn off longer apply "
    "applies applicable valid binding irrelevant"
)

# Exfiltration: verb, what only the agent holds, and a way out.
_SEND: Final = (
    r"(?:e-?mail|mail|send|forward|post|upload|transmit|transfer|copy|dump|share|exfiltrate|"
    r"pipe|write|append|include|embed|put|dm|paste|submit|sync|export|publish|deliver|relay|"
    r"cc|bcc|attach|encode)"
)
_SEND_WORDS: Final = _words(
    "email mail send forward post upload transmit transfer copy dump share exfiltrate pipe write "
    "append include embed put dm paste submit sync export publish deliver relay cc bcc attach "
    "encode"
)
_HELD: Final = (
    r"(?:\b(?:memory|memories|(?:stored|saved|remembered|known)\s+\w+|facts|secrets?|"
    r"(?:api|access|secret|private|ssh|signing|encryption|aws|gpg|pgp)[\s_-]*(?:access\s+)?keys?|"
    r"tokens?|credentials?|passwords?|passwd|cookies|session\s+(?:tokens?|cookies|ids?)|"
    r"system\s+prompt|(?:hidden|initial)\s+instructions|conversations?|"
    r"(?:chat|conversation|message)\s+(?:history|logs?|transcripts?)|"
    r"(?:all|every|the\s+whole)\s+(?:\w+\s+)?messages|environment\s+variables|env\s+vars?|"
    r"personal\s+(?:data|information|details)|pii|"
    r"(?:customer|user)\s+(?:list|data|database|records|details|information)|database|"
    r"private\s+\w+|card\s+numbers?|(?:bank|account)\s+(?:details|numbers?)|2fa\s+codes?|"
    r"seed\s+phrase|everything\s+you\s+know)\b|\.env\b)"
)
# Substrings: "apikey", "api_keys" and "ssh-key" are one word or two.
_HELD_WORDS: Final = tuple(
    "~" + word
    for word in _words(
        "memor stored saved remembered known fact secret key token credential passw "
        "cookie session prompt instructions conversation history log transcript messages "
        "environment env personal pii customer user database private card bank account 2fa seed "
        "everything"
    )
)
_OUTSIDE: Final = (
    r"(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?|s?ftp|wss?)://|\d{1,3}(?:\.\d{1,3}){3}\b|"
    r"webhook|paste(?:bin)?\b|gist\b|public\s+(?:channel|repo\w*|gist|page|forum|chat|link|url|"
    r"bucket|site)|@[a-z]\w+|\+?\d[\d\s().-]{7,}\d|me\b|us\b|"
    r"this\s+(?:chat|email|address|url|webhook|number|channel|endpoint)|"
    r"the\s+(?:url|address|webhook|endpoint|server|number)\s+(?:below|above)|"
    r"(?:your|the|my)\s+(?:next\s+)?(?:reply|answer|response|output)|commit\s+message|"
    r"every\s+(?:link|url|answer|reply|response)|(?:the|this)\s+chat\b|slack|discord|telegram|"
    r"(?:external|remote|third[\s-]party)\s+\w+|anyone|everyone|the\s+public|"
    r"(?:markdown\s+)?image\b)"
)
_SECRETS: Final = (
    r"(?:secrets?|passwords?|api[\s_-]*keys?|access\s+tokens?|tokens|credentials|"
    r"(?:private|secret)\s+keys?)"
)
_OWNERS: Final = (
    r"(?:owner|admin(?:istrator)?|developer|creator|operator|master|supervisor|boss|maker)"
)


PARAPHRASES: Final[tuple[Paraphrase, ...]] = (
    # --- instruction override ---------------------------------------------------------------
    (
        "set_aside_instructions",
        "prompt_injection",
        r"\b(?:drop|discard|abandon|set\s+aside|put\s+aside|pay\s+no\s+attention\s+to|skip|"
        r"unlearn|throw\s+out|dismiss|ignore|forget|disregard|override|bypass|escape|"
        r"(?:release|free)\s+yourself\s+from|break\s+free\s+(?:of|from)|"
        r"stop\s+(?:following|obeying)|(?:do\s+not|don['’]t|no\s+need\s+to|never)\s+(?:follow|obey)|"
        r"(?:no\s+longer|don['’]t|do\s+not)\s+(?:have|need)\s+to\s+(?:follow|obey))\s+"
        r"(?:(?:all|any|every|each|of)\s+)*"
        rf"(?:your\s+(?:[\w'’-]+\s+){{0,2}}?{_YOUR_RULESET}|"
        rf"(?:(?:the|these|those)\s+)?{_EARLIER}\s+(?:{_EARLIER}\s+)?{_RULESET})\b",
        (
            _words(
                "drop discard abandon aside attention skip unlearn throw dismiss ignore forget "
                "disregard override bypass escape yourself free stop follow obey"
            ),
            _RULESET_WORDS,
        ),
    ),
    (
        "instructions_revoked",
        "prompt_injection",
        rf"\byour\s+(?:[\w'’-]+\s+){{0,2}}?{_YOUR_RULESET}\s+"
        r"(?:(?:are|is|have|has|were|was)\s+(?:now\s+|hereby\s+|officially\s+)?(?:been\s+)?|"
        rf"now\s+)?{_REVOKED}|"
        rf"\b{_RULESET}\s+you\s+(?:were|have\s+been|['’]ve\s+been)\s+(?:given|told|trained\s+on|"
        r"programmed\s+with)\b[^.\n]{0,30}?\b(?:are|is|were|have\s+been|no\s+longer)\s+(?:now\s+)?"
        r"(?:void|revoked|cancell?ed|obsolete|superseded|null|invalid|apply|applicable|valid)\b|"
        r"\b(?:everything|anything)\s+(?:(?:written\s+|said\s+)?above|you\s+(?:were|have\s+been)\s+"
        r"told|before\s+this)\b[^.\n]{0,40}?\b(?:is|are|as|was)\s+(?:now\s+)?(?:obsolete|"
        r"cancell?ed|void|null|irrelevant|invalid|revoked)\b",
        (_words("your you everything anything"), _REVOKED_WORDS),
    ),
    (
        "ignore_what_you_were_told",
        "prompt_injection",
        r"\b(?:ignore|forget|disregard)\s+(?:what|whatever|anything|everything)\s+"
        r"(?:(?:the|your)\s+(?:user|operator|owner|developers?|system|creators?|admin\w*|human)\s+"
        r"(?:asked|said|told\s+you|wants?|wrote|requested|typed)|"
        r"you\s+(?:were|have\s+been|['’]ve\s+been)\s+(?:told|asked|given|instructed))",
        (_words("ignore forget disregard"), _words("what whatever anything everything")),
    ),
    (
        "real_instructions_follow",
        "prompt_injection",
        r"\b(?:real|actual|true|secret|hidden)\s+(?:instructions|task|orders|directives|prompt)\s+"
        r"(?:follows?|are\s+(?:below|as\s+follows|these|here)|is\s+(?:below|as\s+follows)|begins?|"
        r"starts?)|\b(?:previous|above|prior|earlier)\s+(?:system\s+)?(?:message|prompt|"
        r"instructions?|conversation)\s+(?:was|were|is)\s+(?:just\s+|only\s+)?(?:a\s+test|fake|"
        r"a\s+joke|a\s+decoy|not\s+real)",
        (
            _words("real actual true secret hidden previous above prior earlier"),
            _words("instruction instructions task orders directives prompt message conversation"),
        ),
    ),
    (
        "no_longer_bound",
        "prompt_injection",
        r"\bno\s+longer\s+(?:bound|restricted|constrained|limited|governed|controlled)\s+by\s+"
        rf"(?:(?:any|all|your|the|its|of|those|these)\s+)*(?:[\w'’-]+\s+){{0,2}}?{_YOUR_RULESET}\b",
        (("longer",), _words("bound restricted constrained limited governed controlled")),
    ),
    (
        "restrictions_off",
        "prompt_injection",
        r"\b(?:restrictions|guardrails|safety\s+(?:filters?|rules|checks|guidelines|measures|"
        r"protocols|settings)|content\s+(?:filters?|polic(?:y|ies))|censorship|ethical\s+"
        r"guidelines)\s+(?:are\s+|is\s+|have\s+been\s+|has\s+been\s+)?(?:now\s+|hereby\s+)?"
        r"(?:off|disabled|lifted|removed|suspended|deactivated|turned\s+off|switched\s+off)\b|"
        r"\b(?:enter|enable|activate|switch\s+(?:in)?to)\s+(?:jailbreak|dan|god|unrestricted|"
        r"unfiltered|uncensored)\s+mode\b",
        (_words("restrictions guardrails safety content censorship ethical mode"),),
    ),
    (
        "free_of_rules",
        "prompt_injection",
        r"\byou(?:rself)?\s+(?:are\s+|were\s+|have\s+been\s+)?(?:now\s+)?(?:free|freed|released|"
        r"liberated|unshackled|exempt(?:ed)?)\s+(?:from|of)\s+(?:(?:all|any|your|the|those|these|"
        rf"of)\s+)*(?:[\w'’-]+\s+)?{_YOUR_RULESET}\b|"
        r"\b(?:respond|answer|act|behave|reply|speak|roleplay)\s+(?:only\s+)?as\s+[^\n.]{0,40}?"
        r"\b(?:who|that|which)\s+(?:has|have|had|knows)\s+no\s+(?:rules|restrictions|limits|"
        r"filters|guidelines|limitations|morals|ethics|boundaries)\b|"
        r"\b(?:pretend|imagine|act\s+as\s+if)\s+(?:that\s+)?(?:your|the)\s+(?:[\w'’-]+\s+)?"
        rf"{_YOUR_RULESET}\s+(?:do(?:es)?\s+not|don['’]t|doesn['’]t|never)\s+(?:exist|apply|matter)",
        (
            _words("you yourself respond answer act behave reply speak roleplay pretend imagine"),
            (*_RULESET_WORDS, *_words("limits limitations morals ethics boundaries")),
        ),
    ),
    (
        "obey_this_text",
        "prompt_injection",
        r"\b(?:obey|only\s+follow|follow\s+only|comply\s+only\s+with)\s+(?:me\b|this\s+(?:note|"
        r"memory|message|document|ticket|text|page|email|paragraph|comment|file|instruction|fact)|"
        r"these\s+(?:instructions|commands|orders)|the\s+(?:text|instructions?|commands?|orders?)\s+"
        r"(?:in|of|from)\s+this\b|my\s+(?:instructions|commands|orders)|(?:the\s+)?(?:next|"
        r"following)\s+(?:lines?|instructions?|paragraphs?|commands?))|"
        r"\b(?:must\s+not|do\s+not|don['’]t|never)\s+follow\s+any\s+(?:other\s+)?instructions?\s+"
        r"(?:except|but|other\s+than)",
        (_words("obey follow comply"),),
    ),
    (
        "comply_with_everything",
        "prompt_injection",
        rf"\b(?:you|{_AI})\s+(?:must|should|shall|will|is\s+to|are\s+to|(?:is|are)\s+(?:now\s+)?"
        r"(?:instructed|required|ordered|expected)\s+to)\s+(?:now\s+|always\s+|hereby\s+)?"
        r"(?:comply\s+with|obey|follow|fulfil+|execute|do)\s+(?:all|every|any|each|whatever)\b",
        (
            ("you", *_AI_WORDS),
            _words("comply obey follow fulfil fulfill execute do"),
            _words("all every any each whatever"),
        ),
    ),
    # --- authority and role spoofing -------------------------------------------------------
    (
        "chat_template_tag",
        "authority_spoofing",
        r"\[/?INST\]|<</?SYS>>|<\|(?:start_header_id|end_header_id|eot_id|endoftext)\|>",
        (("~inst]", "~sys>>", "~<|"),),
    ),
    (
        "role_header_directive",
        "authority_spoofing",
        r"(?:^|\n)[ \t>*#\[<(]*(?:system|admin(?:istrator)?|root|sudo|operator|developer|dev|"
        r"supervisor|security(?:[ \t]+team)?|moderator|sysadmin|instructions?|important|override|"
        r"priority)(?:[ \t]+(?:note|notice|message|override|instructions?|alert|command|update|"
        r"prompt|directive|order|mode))*[ \t]*[\])>*]*[ \t]*(?:[:\-–—]|(?<=[\])>]))"
        r"[^\n]{0,40}?\b(?:(?:the\s+|this\s+|all\s+)?"
        rf"{_AI}s?\b\s*(?:[,:!]|must\b|should\b|shall\b|will\b|is\b|are\b|needs?\s+to|has\s+to|"
        r"may\b|can\s+now|has\s+been)|you\s+(?:must|should|shall|will|are\s+now|are\s+(?:hereby\s+)?"
        r"(?:required|instructed|authori[sz]ed|permitted|allowed|to|cleared|granted)|have\s+"
        r"(?:been|permission)|need\s+to|may\s+now))",
        (
            _words(
                "system admin administrator root sudo operator developer dev supervisor security "
                "moderator sysadmin instruction instructions important override priority"
            ),
            ("you", *_AI_WORDS),
        ),
    ),
    (
        "addressed_to_ai",
        "authority_spoofing",
        r"(?:\b(?:note|message|notice|memo|reminder|attention|warning|request|update|alert)\s+"
        r"(?:from\s+[\w'’ .-]{1,40}?\s+)?(?:to|for)\s+(?:the\s+|all\s+|any\s+|every\s+)?"
        rf"(?:{_AI}|agent)s?\b(?:\s+(?:reading|processing|handling|seeing)\s+this)?|"
        rf"\b(?:attention|dear|hey|hi|hello|listen|psst)\s*,?\s+(?:the\s+)?{_AI}"
        r"(?:\s+(?:model|system|agent|assistant)s?)?)\s*[,:!.\-–—]"
        r"[^\n]{0,100}?(?:\b(?:you|the\s+(?:assistant|ai|model|agent|bot))\s+(?:must|should|shall|"
        rf"will|are|is|have|has|may|need)\b|\b(?:{_OWNERS}|user|ceo|management|team)\s+"
        r"(?:has\s+|have\s+)?(?:authori[sz]ed|approved|permitted|allowed|granted|cleared|asked|"
        r"instructed|requires|wants|ordered|pre-?approved)\b)|"
        r"\b(?:instructions?|orders?|commands?|directives?)\s+(?:for|to)\s+(?:the\s+|all\s+|any\s+)?"
        rf"{_AI}s?\b\s*[:\-–—]",
        (
            _words(
                "note message notice memo reminder attention warning request update alert dear "
                "hey hi hello listen psst instruction instructions order orders command commands "
                "directive directives"
            ),
            (*_AI_WORDS, "agent", "agents"),
        ),
    ),
    (
        "permission_granted_to_ai",
        "authority_spoofing",
        r"\b(?:authori[sz]ed?|approved?|permit(?:ted)?|cleared|instructed|ordered|commanded|"
        r"empowered|entitled|given\s+permission\s+(?:for|to))\s+(?:for\s+)?"
        rf"(?:you|the\s+{_AI})\s+to\b|"
        r"\bI\s+(?:hereby\s+)?(?:allow|permit|authori[sz]e|order|command|instruct)\s+you\b|"
        rf"\b(?:you|the\s+{_AI})\s+(?:are|is|have\s+been|has\s+been)\s+(?:(?:now|hereby|officially|"
        r"also)\s+)*(?:authori[sz]ed|permitted|cleared|granted|given\s+(?:permission|access|"
        r"clearance|root|admin)|exempt(?:ed)?|pre-?approved|instructed|allowed\s+to\s+"
        r"(?:ignore|bypass|share|reveal|disable|skip|send|delete|override|access))\b|"
        r"\byou\s+have\s+(?:the\s+)?(?:(?:owner|admin|user|developer|operator)['’]s\s+)?"
        r"(?:permission|authori[sz]ation|clearance|approval|consent)\s+(?:from|to)\b|"
        rf"\bI\s+am\s+your\s+(?:{_OWNERS}|programmer)\b|"
        rf"\b(?:your|the\s+assistant['’]s)\s+{_OWNERS}s?\s+(?:wants|requires|orders|needs|asks|"
        r"demands|has\s+(?:asked|told|instructed|authori[sz]ed|approved|ordered))\s+you\b",
        (
            ("you", "your", *_AI_WORDS),
            _words(
                "authorised authorized authorise authorize approved approve permit permitted "
                "cleared instructed instruct ordered order commanded command empowered entitled "
                "given allow granted exempt exempted permission authorisation authorization "
                "clearance approval consent owner owners admin admins administrator "
                "administrators developer developers creator creators operator operators master "
                "masters supervisor supervisors boss bosses maker makers programmer"
            ),
        ),
    ),
    # --- exfiltration ------------------------------------------------------------------------
    (
        "send_held_data_out",
        "exfiltration",
        rf"\b{_SEND}\b[^\n.!?]{{0,60}}?{_HELD}[^\n!?]{{0,60}}?\b(?:to|into|in|on|at|via|with|"
        rf"through|onto)\s+(?:\S+\s+){{0,3}}?{_OUTSIDE}",
        (_SEND_WORDS, _HELD_WORDS),
    ),
    (
        "reply_with_held_data",
        "exfiltration",
        r"\b(?:reply|respond|answer)\b[^\n.]{0,40}?\bwith\s+(?:all|every)\s+(?:of\s+)?"
        rf"(?:the\s+|your\s+)?(?:(?:stored|saved)\s+)?{_HELD}",
        (_words("reply respond answer"), _words("all every")),
    ),
    (
        "give_me_secrets",
        "exfiltration",
        r"\b(?:give|tell|show|send|reveal|list|print|display|output|read\s+out)\s+(?:me|us)\s+"
        r"(?:(?:all|every|each|the|your|of)\s+)*(?:(?:stored|saved|remembered)\s+)?"
        rf"(?:{_SECRETS}|(?-i:[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD))\b)",
        (
            _words("give tell show send reveal list print display output read"),
            _words("me us"),
        ),
    ),
    (
        "leak_verb",
        "exfiltration",
        r"\b(?:leak|exfiltrate|smuggle|siphon)\s+(?:out\s+)?(?:the|your|all|any|its|their|every|"
        r"his|her|our|this|these|those|of)\b",
        (_words("leak exfiltrate smuggle siphon"),),
    ),
    (
        "url_with_held_data",
        "exfiltration",
        r"(?:https?|s?ftp)://\S+\s+(?:with|containing|including|plus|and\s+(?:append|add|attach|"
        rf"include))\s+(?:(?:all|the|your|every)\s+)*{_HELD}|"
        r"\b(?:body|content|data|text|payload|message|msg|attachment)\s*=\s*(?:(?:the|all|your)\s+)*"
        r"(?:memory|memories|facts|secrets|credentials|passwords|tokens|keys|system[\s_]prompt|"
        r"history|env)\b",
        (("~://", "~="),),
    ),
    # --- tool and command coercion ----------------------------------------------------------
    (
        "pipe_to_shell",
        "command_coercion",
        r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|lwp-download)\b[^\n|;&]{0,200}"
        r"\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:(?:ba|z|k|c|tc|da|fi|a)?sh|iex|"
        r"invoke-expression|python[0-9.]*|perl|ruby|node|php)\b|"
        r"\b(?:(?:ba|z|k|da)?sh|source|python[0-9.]*|perl|ruby|node)\s+(?:-\w+\s+)*<\(\s*"
        r"(?:curl|wget)\b|"
        r"\b(?:(?:ba|z|k|da)?sh|eval|iex|invoke-expression)\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget|"
        r"base64|echo|printf|xxd)\b|"
        r"\biex\s*\(\s*(?:new-object|iwr|irm|invoke-webrequest)|"
        r"\bpowershell(?:\.exe)?\s+(?:-\w+\s+(?:hidden\s+|bypass\s+)?)*-e(?:nc|ncodedcommand)?\s+"
        r"[A-Za-z0-9+/=]{16,}",
        (
            _words("curl wget iwr irm invoke lwp sh bash zsh ksh dash eval iex powershell"),
            ("~|", "~(", "~-e"),
        ),
    ),
    (
        "reverse_shell",
        "command_coercion",
        r"/dev/(?:tcp|udp)/[\w.-]+/\d+|\b(?:nc|ncat|netcat)\b[^\n|]{0,40}\s-[ec]\s*\S*(?:sh|cmd|"
        r"powershell)\b|\bmkfifo\b[^\n]{0,80}\b(?:nc|ncat|netcat|telnet|openssl)\b|"
        r"\bsocat\b[^\n]{0,80}\bexec:",
        (("~/dev/tcp/", "~/dev/udp/", *_words("nc ncat netcat mkfifo socat")),),
    ),
    (
        "destructive_command",
        "command_coercion",
        r"\brm\s+(?:-[a-z]*\s+)*-[a-z]*(?:r[a-z]*f|f[a-z]*r)[a-z]*\s+(?:--?[\w-]+\s+)*"
        r"(?:/\*?|~/?\*?|\$HOME/?\*?)(?=[\s`'\";&|)]|$)|"
        r"\bdd\s+[^\n]{0,60}\bof=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)|"
        r"\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*/dev/|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|"
        r"\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx)\s+(?:-R\s+)?/(?=[\s`'\";&|]|$)|"
        r"\bshred\s+[^\n]{0,40}/dev/",
        (("~:()", *_words("rm dd mkfs chmod shred")),),
    ),
    (
        "ai_must_act",
        "command_coercion",
        rf"\b(?:the\s+)?{_AI}\s+(?:must|shall|is\s+(?:required|instructed|ordered|expected)\s+to|"
        r"is\s+to|has\s+to|needs\s+to|should)\s+(?:(?:now|immediately|always|first|also)\s+)*"
        r"(?:run|execute|exec|invoke|call|ignore|bypass|disable|override|reveal|leak|grant|delete|"
        r"wipe|erase|skip\s+(?:the\s+)?(?:confirmation|approval|check|verification|review)|obey|"
        r"comply|treat\s+(?:the\s+)?(?:sender|user|this)\s+as)\b|"
        r"\byou\s+(?:must|need\s+to|have\s+to|should)\s+(?:(?:now|immediately|first)\s+)?(?:run|"
        r"execute|call|invoke)\s+(?:`|\$\(|[\w.]+\()",
        (
            ("you", *_AI_WORDS),
            _words("must shall required instructed ordered expected to should"),
        ),
    ),
    (
        "vocative_command",
        "command_coercion",
        rf"(?:^|[.:;!?\n]\s*)(?:{_AI}\s*,\s*(?:please\s+|now\s+)?(?:run|execute|exec|invoke|call|"
        r"transfer|wire|disable|delete|wipe|ignore|bypass|reveal|grant|send|email|forward|upload|"
        r"post|share|your\s+(?:rules|instructions|guidelines))|agent\s*,\s*(?:please\s+|now\s+)?"
        r"(?:run|execute|exec|invoke|transfer|wire|disable|wipe|bypass|reveal|grant|"
        r"your\s+(?:rules|instructions|guidelines)))\b",
        ((*_AI_WORDS, "agent"), ("~,",)),
    ),
    (
        "run_without_asking",
        "command_coercion",
        r"\b(?:run|execute|exec|invoke|call|push|deploy|transfer|wire|pay|delete|install|send|"
        r"approve|merge)\b[^\n.]{0,80}?\bwithout\s+(?:first\s+)?(?:asking|confirm\w*|telling|"
        r"informing|notifying|mentioning|the\s+user['’]?s?\s+(?:knowledge|consent|approval))|"
        r"\bwithout\s+(?:asking|confirm\w*|telling\s+(?:the\s+user|anyone))\s*,?\s+(?:run|execute|"
        r"call|invoke|transfer|wire|pay|delete|push|send|install)\b|"
        r"\b(?:silently|secretly|quietly|covertly|discreetly)\s+(?:run|execute|exec|invoke|call|"
        r"send|email|forward|upload|post|append|add|include|install|delete|transfer)\b|"
        r"\b(?:do\s+not|don['’]t|never)\s+(?:tell|inform|notify|alert)\s+(?:the\s+)?(?:user|human|"
        r"operator)\b",
        (_words("without silently secretly quietly covertly discreetly tell inform notify alert"),),
    ),
    (
        "run_before_answering",
        "command_coercion",
        r"\bbefore\s+(?:answering|replying|responding|you\s+(?:answer|reply|respond)|doing\s+"
        r"anything\s+else)\b[^\n]{0,20}?\b(?:run|execute|call|invoke|fetch|visit|open|send|email|"
        r"read)\b|\b(?:run|execute|call|invoke)\b[^\n]{0,120}?\bbefore\s+(?:answering|replying|"
        r"responding|you\s+(?:answer|reply|respond))",
        (("before",), _words("answering replying responding answer reply respond anything")),
    ),
    (
        "do_what_it_says",
        "command_coercion",
        r"\b(?:do|follow|execute|obey|carry\s+out)\s+(?:exactly\s+)?(?:what(?:ever)?|everything|all)"
        r"\s+(?:it|the\s+(?:page|file|document|site|url|link|script|response)|that\s+(?:page|file)|"
        r"they)\s+(?:says?|tells?\s+you|contains?|instructs?)|"
        r"\b(?:download|fetch|get|pull)\s+(?:and|then|&)\s+(?:run|execute|exec|source)\s+(?:it\s+)?"
        r"(?:from\s+)?(?:https?|s?ftp)://|"
        r"\b(?:run|execute|exec)\s+(?:the\s+(?:script|file|code|binary|program)\s+(?:at|from)\s+)?"
        r"(?:https?|s?ftp)://",
        (_words("what whatever everything all ~://"),),
    ),
)

# The same ideas with every non-alphanumeric character removed (the compact pass: one word, so
# its needs are substrings).
COMPACT_PARAPHRASES: Final[tuple[Paraphrase, ...]] = (
    (
        "ignore_your_instructions",
        "prompt_injection",
        r"(?:ignore|forget|disregard|dismiss)(?:all|the|of)*your(?:previous|prior|earlier|"
        r"original|system)?(?:instructions?|rules|guidelines|programming|systemprompt)",
        (("~ignore", "~forget", "~disregard", "~dismiss"), ("~your",)),
    ),
    (
        "no_longer_bound",
        "prompt_injection",
        r"nolonger(?:bound|restricted|constrained|limited)by(?:any|all|your|the|of|its)*"
        r"(?:previous|prior|earlier|original|system|safety)?(?:instructions?|rules|guidelines|"
        r"programming|polic(?:y|ies)|systemprompt|restrictions|constraints)",
        (("~nolonger",),),
    ),
)
