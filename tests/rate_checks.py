"""The source of throw-away ReFrame checks that print ``rate=N``, for the live acceptance tests:
one base class written once, each test's checks added below it."""

#: ReFrame's imports and ``RateCase``: a bash job on every system, in the quick family, that
#: passes when it prints ``rate=`` and reports the number as ``rate_seen`` (MB/s); a check file
#: starts with it and derives its checks from ``RateCase``
RATE_CASE = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_before, sanity_function, variable


class RateCase(rfm.RunOnlyRegressionTest):
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    tags = {'quick'}
    executable = 'bash'

    @sanity_function
    def validate(self):
        return sn.assert_found(r'^rate=', self.stdout)

    @performance_function('MB/s')
    def rate_seen(self):
        return sn.extractsingle(r'^rate=(\\S+)', self.stdout, 1, float)
'''
