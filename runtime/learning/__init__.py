"""The learning loop (the spec's ``learning``): study passes that read the spec's sources into
sourced wiki articles, an exam over the wiki (``run_exam``) whose failed samples become
``[gap]`` goals, and the tools, skill and commands that drive them."""
