-- Sign-in throttling and lockout state (rate-limiter-flexible's RateLimiterPostgres layout),
-- shared by every process so limits and lockouts hold across them. Keys are
-- "<limiter>:<sha256 of the e-mail address or caller address>", never the address itself;
-- expire is epoch milliseconds, null for no expiry.
create table login_throttle (
  key    varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
create index login_throttle_expire_idx on login_throttle (expire);
