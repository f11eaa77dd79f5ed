// Empty: the crate is here for the pgmq extension files it carries, not for code.
