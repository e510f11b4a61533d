using System;
class A {}
